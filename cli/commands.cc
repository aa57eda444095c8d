#include "cli/commands.h"

#include <pwd.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/controller_client.h"
#include "cli/output_format.h"
#include "common/hostlist.h"

namespace gantry::cli {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int Fail(std::string_view command, const absl::Status& status) {
  std::cerr << "gantry " << command << ": error: " << status.message() << "\n";
  return 1;
}

bool ParseJobId(const std::string& text, uint64_t& id) {
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), id);
  return error == std::errc() && end == text.data() + text.size() && id > 0;
}

std::string CurrentUser() {
  if (passwd* entry = getpwuid(getuid())) return entry->pw_name;
  return absl::StrCat(getuid());
}

}  // namespace

int RunQueueCommand(const std::string& controller,
                    const QueueOptions& options) {
  ControllerClient client(ResolveControllerTarget(controller));
  v1::ListJobsRequest request;
  request.set_all(options.all);
  request.set_user(options.user);
  v1::ListJobsResponse response;
  if (absl::Status status = client.ListJobs(request, response); !status.ok()) {
    return Fail("queue", status);
  }
  const int64_t now = NowMs();
  if (options.json) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const v1::JobRecord& job : response.jobs())
      jobs.push_back(JobToJson(job, now));
    std::cout << nlohmann::json{{"jobs", jobs}}.dump(2) << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {{"JOBID", "PARTITION", "NAME",
                                                 "USER", "ST", "TIME", "NODES",
                                                 "NODELIST(REASON)"}};
  for (const v1::JobRecord& job : response.jobs()) {
    int64_t elapsed = 0;
    if (job.start_time_ms() > 0) {
      elapsed = ((job.end_time_ms() ? job.end_time_ms() : now) -
                 job.start_time_ms()) /
                1000;
    }
    std::string where = job.state() == v1::PENDING ? "(" + job.reason() + ")"
                                                   : JobNodeList(job);
    rows.push_back({absl::StrCat(job.id()), job.spec().partition(),
                    job.spec().name().substr(0, 16), job.user(),
                    StateShort(job.state()), FormatDuration(elapsed),
                    absl::StrCat(job.spec().nodes()), where});
  }
  std::cout << RenderTable(rows);
  return 0;
}

int RunCancelCommand(const std::string& controller,
                     const std::vector<std::string>& job_ids) {
  v1::CancelRequest request;
  for (const std::string& text : job_ids) {
    uint64_t id = 0;
    if (!ParseJobId(text, id)) {
      std::cerr << "gantry cancel: error: invalid job id \"" << text << "\"\n";
      return 1;
    }
    request.add_job_ids(id);
  }
  request.set_user(CurrentUser());
  ControllerClient client(ResolveControllerTarget(controller));
  v1::CancelResponse response;
  if (absl::Status status = client.Cancel(request, response); !status.ok()) {
    return Fail("cancel", status);
  }
  int code = 0;
  for (const v1::CancelResult& result : response.results()) {
    if (!result.ok()) {
      std::cerr << "gantry cancel: error: Kill job error on job id "
                << result.job_id() << ": " << result.error() << "\n";
      code = 1;
    }
  }
  return code;
}

int RunJobCommand(const std::string& controller, const std::string& job_id,
                  bool json, bool script) {
  uint64_t id = 0;
  if (!ParseJobId(job_id, id)) {
    std::cerr << "gantry job: error: invalid job id \"" << job_id << "\"\n";
    return 1;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::GetJobResponse response;
  if (absl::Status status = client.GetJob(id, response); !status.ok()) {
    return Fail("job", status);
  }
  if (script) {
    // The controller sends scripts only to their owners and admins.
    if (response.job().spec().script().empty()) {
      std::cerr << "gantry job: error: the batch script of job " << id
                << " is shown only to its owner and admins\n";
      return 1;
    }
    std::cout << response.job().spec().script();
    return 0;
  }
  nlohmann::json view = JobToJson(response.job(), NowMs());
  nlohmann::json history = nlohmann::json::array();
  for (const v1::EventRecord& event : response.events())
    history.push_back(EventToJson(event));
  if (json) {
    view["history"] = history;
    std::cout << view.dump(2) << "\n";
    return 0;
  }
  const v1::JobRecord& job = response.job();
  std::cout
      << "JobId=" << job.id() << " JobName=" << job.spec().name() << "\n"
      << "   UserId=" << job.user() << "(" << job.uid() << ")"
      << " Partition=" << job.spec().partition() << "\n"
      << "   JobState=" << StateName(job.state()) << " Reason=" << job.reason()
      << (job.reason_detail().empty() ? "" : " (" + job.reason_detail() + ")")
      << "\n"
      << "   ExitCode=" << job.exit_code() << ":" << job.exit_signal()
      << " Attempt=" << job.attempt() << "\n"
      << "   SubmitTime=" << FormatTime(job.submit_time_ms())
      << " StartTime=" << FormatTime(job.start_time_ms())
      << " EndTime=" << FormatTime(job.end_time_ms()) << "\n"
      << "   RunTime=" << FormatDuration(view["elapsed_seconds"].get<int64_t>())
      << " TimeLimit="
      << (job.spec().time_limit_seconds()
              ? FormatDuration(
                    static_cast<int64_t>(job.spec().time_limit_seconds()))
              : "UNLIMITED")
      << "\n"
      << "   NumNodes=" << job.spec().nodes() << " NumTasks=" << view["ntasks"]
      << " CPUs/Task=" << job.spec().cpus_per_task()
      << " GPUs/Node=" << job.spec().gpus_per_node() << "\n"
      << "   NodeList=" << JobNodeList(job) << "\n"
      << "   WorkDir=" << job.spec().working_dir() << "\n"
      << "   StdOut=" << job.output_path() << "\n"
      << "   StdErr="
      << (job.error_path().empty() ? job.output_path() : job.error_path())
      << "\n";
  if (!job.spec().checkpoint_dir().empty()) {
    std::cout << "   CheckpointDir=" << job.spec().checkpoint_dir() << "\n";
  }
  if (!job.latest_checkpoint().path().empty()) {
    std::cout << "   LatestCheckpoint=" << job.latest_checkpoint().path()
              << " Step=" << job.latest_checkpoint().step()
              << " Source=" << job.latest_checkpoint().source()
              << " At=" << FormatTime(job.latest_checkpoint().time_ms())
              << "\n";
  }
  if (job.attempts_size() > 0) {
    std::cout << "   Attempts:\n";
    for (const v1::AttemptRecord& attempt : job.attempts()) {
      std::cout << "     #" << attempt.attempt() << "  "
                << absl::StrJoin(attempt.nodes(), ",") << "  "
                << FormatTime(attempt.start_time_ms()) << " -> "
                << (attempt.end_time_ms() ? FormatTime(attempt.end_time_ms())
                                          : "running")
                << (attempt.end_reason().empty() ? ""
                                                 : "  " + attempt.end_reason())
                << (attempt.end_detail().empty()
                        ? ""
                        : " (" + attempt.end_detail() + ")")
                << (attempt.resumed_from().empty()
                        ? ""
                        : "  resumed from " + attempt.resumed_from())
                << "\n";
    }
  }
  if (!history.empty()) {
    std::cout << "   History:\n";
    for (const v1::EventRecord& event : response.events()) {
      std::cout << "     " << FormatTime(event.time_ms()) << "  "
                << event.kind()
                << (event.detail().empty() ? "" : "  " + event.detail())
                << "\n";
    }
  }
  return 0;
}

namespace {

// "4 (4 active, IB 400G)": the node's compute HCAs, from verbs ports when
// known; "-" for none.
std::string HcaSummary(const v1::NodeRecord& node) {
  int hcas = 0, active = 0;
  std::string link;
  for (const v1::NetworkDevice& device : node.inventory().network_devices()) {
    if (device.kind() != "openfabrics" || device.role() != "compute") continue;
    ++hcas;
    for (const v1::HcaPort& port : device.ports()) {
      if (port.state() == "ACTIVE") ++active;
      if (link.empty()) {
        link = absl::StrCat(port.link_layer() == "Ethernet" ? "RoCE" : "IB",
                            " ", port.rate_gbps(), "G");
      }
    }
  }
  if (hcas == 0) return "-";
  if (link.empty()) return absl::StrCat(hcas);
  return absl::StrCat(hcas, " (", active, " active, ", link, ")");
}

void PrintNodeDetail(const v1::NodeRecord& node) {
  const v1::NodeInventory& inventory = node.inventory();
  std::cout << "NodeName=" << node.name()
            << " State=" << NodeStateName(node.state())
            << (node.drained() ? "+drain" : "")
            << (node.hot_spare() ? "+spare" : "")
            << " Address=" << node.address() << "\n"
            << "   Reason="
            << (node.drained() ? node.drain_reason() : node.reason()) << "\n"
            << "   Health="
            << (node.health_problems_size() == 0
                    ? "ok"
                    : absl::StrJoin(node.health_problems(), "; "))
            << "\n"
            << "   Sockets=" << inventory.packages()
            << " Cores=" << inventory.cores() << " CPUs=" << inventory.cpus()
            << " NUMA=" << inventory.numa_nodes()
            << " RealMemory=" << inventory.memory_mb() << "\n"
            << "   CPUAlloc=" << node.cpus_allocated()
            << " GPUAlloc=" << node.gpus_allocated()
            << " MemAlloc=" << node.mem_allocated_mb() << "\n"
            << "   LeafSwitches="
            << (node.leaf_switches().empty()
                    ? "-"
                    : absl::StrJoin(node.leaf_switches(), ","))
            << " Inventory=" << inventory.source() << "\n";
  std::vector<std::vector<std::string>> gpus = {
      {"GPU", "VENDOR", "MODEL", "PCI", "NUMA", "NEAREST_HCA", "VIA"}};
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    gpus.push_back({absl::StrCat(gpu.index()), gpu.vendor(), gpu.model(),
                    gpu.pci_bus_id(), absl::StrCat(gpu.numa_node()),
                    gpu.nearest_hca().empty() ? "-" : gpu.nearest_hca(),
                    gpu.hca_locality().empty() ? "-" : gpu.hca_locality()});
  }
  if (gpus.size() > 1) std::cout << RenderTable(gpus);
  std::vector<std::vector<std::string>> devices = {
      {"DEVICE", "KIND", "ROLE", "PCI", "NUMA", "GPUS", "PORTS"}};
  for (const v1::NetworkDevice& device : inventory.network_devices()) {
    std::vector<std::string> ports;
    for (const v1::HcaPort& port : device.ports()) {
      ports.push_back(absl::StrCat(port.port(), ":", port.state(), "/",
                                   port.link_layer(), "/", port.rate_gbps(),
                                   "G"));
    }
    std::vector<std::string> served;
    for (uint32_t gpu : device.gpus()) served.push_back(absl::StrCat(gpu));
    devices.push_back({device.name(), device.kind(),
                       device.role().empty() ? "-" : device.role(),
                       device.pci_bus_id().empty() ? "-" : device.pci_bus_id(),
                       absl::StrCat(device.numa_node()),
                       served.empty() ? "-" : absl::StrJoin(served, ","),
                       ports.empty() ? "-" : absl::StrJoin(ports, " ")});
  }
  if (devices.size() > 1) std::cout << RenderTable(devices);
}

}  // namespace

int RunNodesCommand(const std::string& controller, const std::string& only,
                    bool json) {
  ControllerClient client(ResolveControllerTarget(controller));
  v1::ListNodesResponse response;
  if (absl::Status status = client.ListNodes(response); !status.ok()) {
    return Fail("nodes", status);
  }
  if (!only.empty()) {
    for (const v1::NodeRecord& node : response.nodes()) {
      if (node.name() != only) continue;
      if (json) {
        std::cout << NodeToJson(node).dump(2) << "\n";
      } else {
        PrintNodeDetail(node);
      }
      return 0;
    }
    std::cerr << "gantry nodes: error: unknown node " << only << "\n";
    return 1;
  }
  if (json) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const v1::NodeRecord& node : response.nodes())
      nodes.push_back(NodeToJson(node));
    std::cout << nlohmann::json{{"nodes", nodes}}.dump(2) << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"NODE", "STATE", "PARTITIONS", "CPUS(A/T)", "GPUS(A/T)", "MEMORY_MB",
       "HCAS", "LEAF", "ADDRESS", "REASON"}};
  for (const v1::NodeRecord& node : response.nodes()) {
    std::string state = NodeStateName(node.state());
    if (node.health_problems_size() > 0) state += "+degraded";
    if (node.drained()) state += "+drain";
    if (node.hot_spare()) state += "+spare";
    std::string reason = node.drained() ? node.drain_reason() : node.reason();
    if (node.health_problems_size() > 0) {
      reason = absl::StrJoin(node.health_problems(), "; ");
    }
    rows.push_back(
        {node.name(), state, absl::StrJoin(node.partitions(), ","),
         absl::StrCat(node.cpus_allocated(), "/", node.inventory().cpus()),
         absl::StrCat(node.gpus_allocated(), "/", node.inventory().gpus_size()),
         absl::StrCat(node.inventory().memory_mb()), HcaSummary(node),
         node.leaf_switches().empty()
             ? "-"
             : absl::StrJoin(node.leaf_switches(), ","),
         node.address(), reason});
  }
  std::cout << RenderTable(rows);
  return 0;
}

int RunProgressCommand(const std::string& controller, const std::string& job,
                       const std::string& path, int64_t step) {
  const char* command = path.empty() ? "progress" : "checkpoint";
  std::string job_text = job;
  if (job_text.empty()) {
    if (const char* env = std::getenv("GANTRY_JOB_ID")) job_text = env;
  }
  uint64_t id = 0;
  if (!ParseJobId(job_text, id)) {
    std::cerr << "gantry " << command
              << ": error: no job: run it inside a job (GANTRY_JOB_ID) or "
                 "give --job ID\n";
    return 1;
  }
  v1::ReportProgressRequest request;
  request.set_job_id(id);
  request.set_step(step);
  request.set_user(CurrentUser());
  if (!path.empty()) {
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(path, error);
    request.set_checkpoint_path(absolute.lexically_normal().string());
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::ReportProgressResponse response;
  if (absl::Status status = client.ReportProgress(request, response);
      !status.ok()) {
    return Fail(command, status);
  }
  return 0;
}

int RunTopologyCommand(const std::string& controller, const std::string& file,
                       const std::string& format, bool json) {
  ControllerClient client(ResolveControllerTarget(controller));
  v1::TopologyReport report;
  absl::Status status;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << "gantry topology: error: unable to open file " << file
                << "\n";
      return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    v1::ImportTopologyRequest request;
    request.set_text(text.str());
    request.set_format(format);
    request.set_source(file);
    request.set_user(CurrentUser());
    status = client.ImportTopology(request, report);
  } else {
    status = client.GetTopology(report);
  }
  if (!status.ok()) return Fail("topology", status);
  if (json) {
    std::cout << nlohmann::json{{"present", report.present()},
                                {"format", report.format()},
                                {"source", report.source()},
                                {"imported_time",
                                 FormatTime(report.imported_time_ms())},
                                {"switches", report.switches()},
                                {"levels", report.levels()},
                                {"nodes", report.nodes()},
                                {"tree", report.description()},
                                {"unserved", std::vector<std::string>(
                                                 report.unserved().begin(),
                                                 report.unserved().end())},
                                {"unknown_agents",
                                 std::vector<std::string>(
                                     report.unknown_agents().begin(),
                                     report.unknown_agents().end())}}
                     .dump(2)
              << "\n";
    return 0;
  }
  if (!report.present()) {
    std::cout << "No topology imported (gantry topology import FILE).\n";
    return 0;
  }
  if (!file.empty()) std::cout << "Imported " << file << ".\n";
  std::cout << "Topology from " << report.source() << " (" << report.format()
            << ", imported " << FormatTime(report.imported_time_ms()) << ")\n"
            << report.description();
  if (!report.description().empty() && report.description().back() != '\n') {
    std::cout << "\n";
  }
  std::vector<std::string> unserved(report.unserved().begin(),
                                    report.unserved().end());
  std::vector<std::string> unknown(report.unknown_agents().begin(),
                                   report.unknown_agents().end());
  std::cout << "In the fabric, no agent: "
            << (unserved.empty() ? "none" : CompressHostlist(unserved)) << "\n"
            << "Agents the fabric does not know: "
            << (unknown.empty() ? "none" : CompressHostlist(unknown)) << "\n";
  return 0;
}

int RunDrainCommand(const std::string& controller,
                    const std::vector<std::string>& nodes,
                    const std::string& reason, bool resume) {
  const char* command = resume ? "resume" : "drain";
  v1::DrainRequest request;
  for (const std::string& expression : nodes) {
    absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(expression);
    if (!names.ok()) {
      std::cerr << "gantry " << command
                << ": error: " << names.status().message() << "\n";
      return 1;
    }
    for (const std::string& name : *names) request.add_nodes(name);
  }
  request.set_reason(reason);
  request.set_resume(resume);
  request.set_user(CurrentUser());
  ControllerClient client(ResolveControllerTarget(controller));
  v1::DrainResponse response;
  if (absl::Status status = client.Drain(request, response); !status.ok()) {
    return Fail(command, status);
  }
  return 0;
}

int RunStatusCommand(const std::string& controller, bool json) {
  ControllerClient client(ResolveControllerTarget(controller));
  v1::ClusterStatusResponse status;
  if (absl::Status error = client.ClusterStatus(status); !error.ok()) {
    return Fail("status", error);
  }
  int64_t uptime = (status.now_ms() - status.started_ms()) / 1000;
  if (json) {
    std::cout << nlohmann::json{{"controller", client.target()},
                                {"version", status.version()},
                                {"uptime_seconds", uptime},
                                {"state_dir", status.state_dir()},
                                {"nodes",
                                 {{"total", status.nodes_total()},
                                  {"up", status.nodes_up()},
                                  {"unreachable", status.nodes_unreachable()},
                                  {"down", status.nodes_down()}}},
                                {"cpus",
                                 {{"total", status.cpus_total()},
                                  {"allocated", status.cpus_allocated()}}},
                                {"gpus",
                                 {{"total", status.gpus_total()},
                                  {"allocated", status.gpus_allocated()}}},
                                {"jobs",
                                 {{"pending", status.jobs_pending()},
                                  {"running", status.jobs_running()},
                                  {"finished", status.jobs_finished()}}},
                                {"next_job_id", status.next_job_id()}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "Controller  " << client.target() << " (gantryd "
            << status.version() << ", up " << FormatDuration(uptime)
            << ", state in " << status.state_dir() << ")\n"
            << "Nodes       " << status.nodes_total()
            << " total: " << status.nodes_up() << " up, "
            << status.nodes_unreachable() << " unreachable, "
            << status.nodes_down() << " down\n"
            << "CPUs        " << status.cpus_allocated() << "/"
            << status.cpus_total() << " allocated\n"
            << "GPUs        " << status.gpus_allocated() << "/"
            << status.gpus_total() << " allocated\n"
            << "Jobs        " << status.jobs_pending() << " pending, "
            << status.jobs_running() << " running, " << status.jobs_finished()
            << " finished\n";
  return 0;
}

}  // namespace gantry::cli
