#include "cli/commands.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/controller_client.h"
#include "cli/output_format.h"
#include "cli/printable_records.h"
#include "cli/sinfo_format.h"
#include "cli/slurm_words.h"
#include "cli/squeue_format.h"
#include "common/hostlist.h"
#include "common/signal_name.h"

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

// Slurm prints "(null)" for an unset value.
std::string OrNull(const std::string& value) {
  return value.empty() ? "(null)" : value;
}

}  // namespace

namespace {

// "-u a,b -u c" -> {a, b, c}.
std::vector<std::string> SplitLists(const std::vector<std::string>& lists) {
  std::vector<std::string> items;
  for (const std::string& list : lists) {
    for (absl::string_view item : absl::StrSplit(list, ',', absl::SkipEmpty()))
      items.emplace_back(item);
  }
  return items;
}

// A job as squeue, scancel and scontrol take it: "ID" (for an array, all
// its tasks) or "ID_TASK" (one task of array ID).
struct JobSelector {
  uint64_t id = 0;
  std::optional<uint32_t> task;

  bool Matches(const v1::JobRecord& job) const {
    if (task.has_value()) {
      return job.array_job_id() == id && job.array_task_id() == *task;
    }
    return job.id() == id || job.array_job_id() == id;
  }
  std::string ToString() const {
    return task ? absl::StrCat(id, "_", *task) : absl::StrCat(id);
  }
};

std::optional<JobSelector> ParseJobSelector(const std::string& text) {
  JobSelector selector;
  const size_t underscore = text.find('_');
  if (!ParseJobId(text.substr(0, underscore), selector.id)) return std::nullopt;
  if (underscore != std::string::npos) {
    const std::string task = text.substr(underscore + 1);
    uint32_t index = 0;
    auto [end, error] =
        std::from_chars(task.data(), task.data() + task.size(), index);
    if (task.empty() || error != std::errc() ||
        end != task.data() + task.size()) {
      return std::nullopt;
    }
    selector.task = index;
  }
  return selector;
}

absl::StatusOr<std::vector<JobSelector>> ParseJobSelectors(
    const std::vector<std::string>& lists) {
  std::vector<JobSelector> selectors;
  for (const std::string& text : SplitLists(lists)) {
    std::optional<JobSelector> selector = ParseJobSelector(text);
    if (!selector.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid job id \"", text, "\" (expected ID or ARRAYID_TASK)"));
    }
    selectors.push_back(*selector);
  }
  return selectors;
}

// Selectors and filters go to the controller, which resolves them: the CLI
// never lists every job to pick a few.
void AddSelectors(const std::vector<JobSelector>& selectors,
                  v1::JobFilter& filter) {
  for (const JobSelector& selector : selectors) {
    v1::JobSelector* added = filter.add_jobs();
    added->set_job_id(selector.id);
    if (selector.task.has_value()) added->set_array_task_id(*selector.task);
  }
}

template <typename Set, typename Field>
void AddAll(const Set& values, Field& field) {
  for (const auto& value : values) *field.Add() = value;
}

bool Selected(const std::vector<JobSelector>& selectors,
              const v1::JobRecord& job) {
  return selectors.empty() ||
         std::any_of(selectors.begin(), selectors.end(),
                     [&](const JobSelector& s) { return s.Matches(job); });
}

template <typename T>
bool Allowed(const std::set<T>& allowed, const T& value) {
  return allowed.empty() || allowed.count(value) > 0;
}

}  // namespace

int RunQueueCommand(const std::string& controller,
                    const QueueOptions& options) {
  absl::StatusOr<std::vector<JobSelector>> ids =
      ParseJobSelectors(options.job_ids);
  if (!ids.ok()) return Fail("queue", ids.status());
  std::set<v1::JobState> states;
  if (!options.states.empty()) {
    absl::StatusOr<std::set<v1::JobState>> parsed =
        ParseJobStates(absl::StrJoin(options.states, ","));
    if (!parsed.ok()) return Fail("queue", parsed.status());
    states = *std::move(parsed);
  }
  absl::StatusOr<SqueueFormat> format = SqueueFormat::Parse(
      options.format.empty() ? kSqueueDefaultFormat : options.format);
  if (!format.ok()) return Fail("queue", format.status());
  const std::vector<std::string> user_list = SplitLists(options.users);
  const std::set<std::string> users(user_list.begin(), user_list.end());
  const std::vector<std::string> partition_list =
      SplitLists(options.partitions);
  const std::set<std::string> partitions(partition_list.begin(),
                                         partition_list.end());

  ControllerClient client(ResolveControllerTarget(controller));
  v1::ListJobsRequest request;
  // Finished jobs only when asked for: -a, a finished state, or job ids.
  bool finished = options.all || !ids->empty();
  for (v1::JobState state : states) finished = finished || IsFinished(state);
  request.set_all(finished);
  v1::JobFilter& filter = *request.mutable_filter();
  AddAll(users, *filter.mutable_users());
  AddAll(partitions, *filter.mutable_partitions());
  for (v1::JobState state : states) filter.add_states(state);
  AddSelectors(*ids, filter);
  std::vector<v1::JobRecord> listed;
  if (absl::Status status = client.ListAllJobs(request, listed); !status.ok()) {
    return Fail("queue", status);
  }
  for (v1::JobRecord& job : listed) {
    MakePrintable(job,
                  options.json ? OutputKind::kJson : OutputKind::kTerminal);
  }
  std::vector<const v1::JobRecord*> jobs;
  for (const v1::JobRecord& job : listed) {
    if (Selected(*ids, job) && Allowed(users, job.user()) &&
        Allowed(partitions, job.spec().partition()) &&
        Allowed(states, job.state())) {
      jobs.push_back(&job);
    }
  }
  const int64_t now = NowMs();
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const v1::JobRecord* job : jobs) list.push_back(JobToJson(*job, now));
    std::cout << nlohmann::json{{"jobs", list}}.dump(2) << "\n";
    return 0;
  }
  if (!options.no_header) std::cout << format->Header();
  if (options.array_unfolded) {
    for (const v1::JobRecord* job : jobs) std::cout << format->Row(*job, now);
    return 0;
  }
  for (const SqueueLine& line : FoldPendingArrayTasks(jobs)) {
    std::cout << format->Row(*line.job, now, line.folded_tasks);
  }
  return 0;
}

int RunCancelCommand(const std::string& controller,
                     const CancelOptions& options) {
  absl::StatusOr<std::vector<JobSelector>> ids =
      ParseJobSelectors(options.job_ids);
  if (!ids.ok()) return Fail("cancel", ids.status());
  int signal = 0;
  if (!options.signal.empty()) {
    absl::StatusOr<int> parsed = ParseSignal(options.signal);
    if (!parsed.ok()) return Fail("cancel", parsed.status());
    signal = *parsed;
  }
  if ((options.batch || options.full) && signal == 0) {
    std::cerr << "gantry cancel: error: -b/--batch and -f/--full say where "
                 "a --signal goes; give --signal too\n";
    return 1;
  }
  if (options.batch && options.full) {
    std::cerr << "gantry cancel: error: -b/--batch and -f/--full exclude "
                 "each other\n";
    return 1;
  }
  std::set<v1::JobState> states;
  if (!options.states.empty()) {
    absl::StatusOr<std::set<v1::JobState>> parsed =
        ParseJobStates(absl::StrJoin(options.states, ","));
    if (!parsed.ok()) return Fail("cancel", parsed.status());
    states = *std::move(parsed);
  }
  const std::vector<std::string> user_list = SplitLists(options.users);
  std::set<std::string> users(user_list.begin(), user_list.end());
  const std::vector<std::string> name_list = SplitLists(options.names);
  const std::set<std::string> names(name_list.begin(), name_list.end());
  const bool filtered = !users.empty() || !names.empty() || !states.empty();
  if (ids->empty() && !filtered) {
    std::cerr << "gantry cancel: error: no job given: name job ids, or "
                 "select jobs with -u USER, -n NAME or -t STATE (all of "
                 "yours: gantry cancel -u "
              << CurrentUser() << ")\n";
    return 1;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::CancelRequest request;
  request.set_user(CurrentUser());
  request.set_signal(signal);
  request.set_signal_target(options.batch
                                ? v1::CancelRequest::SIGNAL_BATCH_SCRIPT
                            : options.full ? v1::CancelRequest::SIGNAL_FULL
                                           : v1::CancelRequest::SIGNAL_STEPS);
  // The controller resolves the selection (CancelRequest.filter): an
  // array's id stands for its pending and running tasks; with -u, -n or
  // -t, the pending and running jobs matching all of them (none matching
  // is no error for scancel).
  v1::JobFilter& filter = *request.mutable_filter();
  AddSelectors(*ids, filter);
  if (filtered) {
    // With no ids, the caller's own jobs unless -u says whose; the
    // controller still refuses jobs the caller may not manage.
    if (ids->empty() && users.empty()) users.insert(CurrentUser());
    AddAll(users, *filter.mutable_users());
    AddAll(names, *filter.mutable_names());
    for (v1::JobState state : states) filter.add_states(state);
  }
  v1::CancelResponse response;
  if (absl::Status status = client.Cancel(request, response); !status.ok()) {
    return Fail("cancel", status);
  }
  int code = 0;
  for (const v1::CancelResult& result : response.results()) {
    if (!result.ok()) {
      std::cerr << "gantry cancel: error: " << (signal ? "Signal" : "Kill")
                << " job error on job id "
                << (result.selector().empty() ? absl::StrCat(result.job_id())
                                              : result.selector())
                << ": " << result.error() << "\n";
      code = 1;
    }
  }
  return code;
}

int RunHoldCommand(const std::string& controller,
                   const std::vector<std::string>& job_ids, bool release) {
  const char* command = release ? "release" : "hold";
  absl::StatusOr<std::vector<JobSelector>> selectors =
      ParseJobSelectors(job_ids);
  if (!selectors.ok()) return Fail(command, selectors.status());
  if (selectors->empty()) {
    std::cerr << "gantry " << command << ": error: no job given: name job "
              << "ids (an array's ID: all its pending tasks)\n";
    return 1;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  int code = 0;
  v1::HoldRequest request;
  request.set_user(CurrentUser());
  request.set_release(release);
  AddSelectors(*selectors, *request.mutable_filter());
  v1::HoldResponse response;
  if (absl::Status status = client.Hold(request, response); !status.ok()) {
    return Fail(command, status);
  }
  for (const v1::CancelResult& result : response.results()) {
    if (!result.ok()) {
      std::cerr << "gantry " << command << ": error: " << result.error()
                << "\n";
      code = 1;
    }
  }
  return code;
}

int RunHostnamesCommand(const std::vector<std::string>& hostlists) {
  std::vector<std::string> expressions = hostlists;
  if (expressions.empty()) {
    const char* nodelist = std::getenv("SLURM_JOB_NODELIST");
    if (nodelist == nullptr || *nodelist == '\0') {
      std::cerr << "gantry hostnames: error: no hostlist given and "
                   "SLURM_JOB_NODELIST is not set: give one, e.g. "
                   "gantry hostnames node[01-04]\n";
      return 1;
    }
    expressions.push_back(nodelist);
  }
  for (const std::string& expression : expressions) {
    absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(expression);
    if (!names.ok()) return Fail("hostnames", names.status());
    for (const std::string& name : *names) std::cout << name << "\n";
  }
  return 0;
}

int RunJobCommand(const std::string& controller, const std::string& job_id,
                  bool json, bool script) {
  const std::optional<JobSelector> selector = ParseJobSelector(job_id);
  if (!selector.has_value()) {
    std::cerr << "gantry job: error: invalid job id \"" << job_id
              << "\" (expected ID or ARRAYID_TASK)\n";
    return 1;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  // An array task is found by the controller, in its live state or its
  // history.
  v1::GetJobRequest request;
  request.set_job_id(selector->id);
  if (selector->task.has_value()) request.set_array_task_id(*selector->task);
  v1::GetJobResponse response;
  if (absl::Status status = client.GetJob(request, response); !status.ok()) {
    return Fail("job", status);
  }
  const uint64_t id = response.job().id();
  if (!script) {
    MakePrintable(response, json ? OutputKind::kJson : OutputKind::kTerminal);
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
  const v1::JobSpec& spec = job.spec();
  // scontrol show job's layout and key names, so scripts that pick fields
  // out of it (JobState=, NodeList=, ...) work unchanged.
  const uint32_t nodes =
      job.allocation_size() > 0 ? job.allocation_size() : spec.nodes();
  uint32_t cpus = 0;
  for (const v1::NodeAllocation& share : job.allocation()) cpus += share.cpus();
  const uint32_t tasks = view["ntasks"].get<uint32_t>();
  const uint32_t cpus_per_task =
      spec.cpus_per_task() ? spec.cpus_per_task() : 1;
  if (cpus == 0) cpus = tasks * cpus_per_task;
  std::string tres = absl::StrCat("cpu=", cpus);
  if (spec.mem_per_node_mb()) {
    absl::StrAppend(&tres, ",mem=", spec.mem_per_node_mb() * nodes, "M");
  }
  absl::StrAppend(&tres, ",node=", nodes);
  if (spec.gpus_per_node()) {
    absl::StrAppend(&tres, ",gres/gpu",
                    spec.gpu_type().empty() ? "" : ":" + spec.gpu_type(), "=",
                    spec.gpus_per_node() * nodes);
  }
  std::string group_name = absl::StrCat(job.gid());
  if (::group* entry = getgrgid(job.gid())) group_name = entry->gr_name;
  const std::string node_list = JobNodeList(job);
  std::cout << "JobId=" << job.id();
  if (job.array_job_id() != 0) {
    std::cout << " ArrayJobId=" << job.array_job_id()
              << " ArrayTaskId=" << job.array_task_id();
  }
  std::cout << " JobName=" << spec.name() << "\n"
            << "   UserId=" << job.user() << "(" << job.uid() << ")"
            << " GroupId=" << group_name << "(" << job.gid() << ")\n"
            << "   JobState=" << StateName(job.state())
            << " Reason=" << (job.reason().empty() ? "None" : job.reason())
            << " Dependency="
            << (spec.dependency().empty() ? "(null)" : spec.dependency())
            << "\n";
  if (!job.reason_detail().empty()) {
    std::cout << "   ReasonDetail=" << job.reason_detail() << "\n";
  }
  std::cout
      << "   Restarts=" << (job.attempt() > 0 ? job.attempt() - 1 : 0)
      << " Attempt=" << job.attempt() << " BatchFlag=1"
      << " ExitCode=" << job.exit_code() << ":" << job.exit_signal() << "\n"
      << "   RunTime=" << FormatDuration(view["elapsed_seconds"].get<int64_t>())
      << " TimeLimit="
      << (spec.time_limit_seconds()
              ? FormatDuration(static_cast<int64_t>(spec.time_limit_seconds()))
              : "UNLIMITED")
      << "\n"
      << "   SubmitTime=" << FormatTime(job.submit_time_ms())
      << " EligibleTime="
      << FormatTime(std::max(job.submit_time_ms(), job.eligible_time_ms()))
      << "\n"
      << "   StartTime=" << FormatTime(job.start_time_ms())
      << " EndTime=" << FormatTime(job.end_time_ms()) << "\n"
      << "   Partition=" << spec.partition() << "\n"
      << "   ReqNodeList="
      << OrNull(CompressHostlist(
             {spec.required_nodes().begin(), spec.required_nodes().end()}))
      << " ExcNodeList="
      << OrNull(CompressHostlist(
             {spec.excluded_nodes().begin(), spec.excluded_nodes().end()}))
      << " Features=" << OrNull(spec.constraint()) << "\n"
      << "   NodeList=" << (node_list.empty() ? "(null)" : node_list)
      << " BatchHost="
      << (job.allocation_size() > 0 ? job.allocation(0).node() : "(null)")
      << "\n"
      << "   NumNodes=" << nodes << " NumCPUs=" << cpus << " NumTasks=" << tasks
      << " CPUs/Task=" << cpus_per_task << " GPUs/Node=" << spec.gpus_per_node()
      << "\n"
      << "   TRES=" << tres << "\n"
      << "   MinMemoryNode="
      << (spec.mem_per_node_mb() ? absl::StrCat(spec.mem_per_node_mb(), "M")
                                 : "0")
      << "\n"
      // The script itself is stored, not its path.
      << "   Command=(batch script: gantry job " << job.id() << " --script)\n"
      << "   WorkDir=" << spec.working_dir() << "\n"
      << "   StdErr="
      << (job.error_path().empty() ? job.output_path() : job.error_path())
      << "\n"
      << "   StdIn=/dev/null\n"
      << "   StdOut=" << job.output_path() << "\n";
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
  if (job.steps_size() > 0) {
    std::cout << "   Steps:\n";
    for (const v1::StepRecord& step : job.steps()) {
      std::cout << "     " << job.id() << "." << step.id() << "  "
                << absl::StrJoin(step.argv(), " ").substr(0, 60) << "  "
                << StepTaskCount(step) << " task(s) on "
                << absl::StrJoin(StepNodeNames(step), ",") << "  "
                << (step.end_time_ms()
                        ? absl::StrCat("ExitCode=", step.exit_code())
                        : std::string("running"))
                << (step.end_detail().empty() ? ""
                                              : " (" + step.end_detail() + ")")
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
            << (node.simulated() ? "+sim" : "") << " Address=" << node.address()
            << "\n"
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
            << " Inventory=" << inventory.source() << "\n"
            << "   AvailableFeatures="
            << (node.features().empty() ? "(null)"
                                        : absl::StrJoin(node.features(), ","))
            << "\n";
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

int RunNodesCommand(const std::string& controller,
                    const NodesOptions& options) {
  SinfoFilter filter;
  for (const std::string& partition : SplitLists(options.partitions))
    filter.partitions.insert(partition);
  for (const std::string& state : SplitLists(options.states)) {
    static const std::set<std::string> kKnown = {
        "idle", "mix", "alloc", "drain", "drng", "resv", "down"};
    std::string word = absl::AsciiStrToLower(state);
    if (word == "allocated") word = "alloc";
    if (word == "mixed") word = "mix";
    if (word == "draining") word = "drng";
    if (word == "drained") word = "drain";
    if (word == "reserved") word = "resv";
    if (!kKnown.count(word)) {
      std::cerr << "gantry nodes: error: invalid node state \"" << state
                << "\": use idle, mix, alloc, drain, drng, resv or down\n";
      return 1;
    }
    filter.states.insert(word);
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::ListNodesResponse response;
  if (absl::Status status = client.ListNodes(response); !status.ok()) {
    return Fail("nodes", status);
  }
  MakePrintable(response,
                options.json ? OutputKind::kJson : OutputKind::kTerminal);
  if (!options.node.empty()) {
    for (const v1::NodeRecord& node : response.nodes()) {
      if (node.name() != options.node) continue;
      if (options.json) {
        std::cout << NodeToJson(node).dump(2) << "\n";
      } else {
        PrintNodeDetail(node);
      }
      return 0;
    }
    std::cerr << "gantry nodes: error: unknown node " << options.node
              << " (list them with gantry nodes -N)\n";
    return 1;
  }
  std::vector<v1::NodeRecord> nodes;
  for (const v1::NodeRecord& node : response.nodes()) {
    const bool in_partition =
        node.partitions().empty()
            ? filter.partitions.empty()
            : std::any_of(node.partitions().begin(), node.partitions().end(),
                          [&](const std::string& partition) {
                            return filter.Matches(node, partition);
                          });
    if (in_partition) nodes.push_back(node);
  }
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const v1::NodeRecord& node : nodes) list.push_back(NodeToJson(node));
    nlohmann::json partitions = nlohmann::json::array();
    for (const v1::PartitionInfo& partition : response.partitions()) {
      partitions.push_back(
          {{"name", partition.name()},
           {"default", partition.is_default()},
           {"nodes", partition.nodes()},
           {"default_time_seconds", partition.default_time_seconds()},
           {"max_time_seconds", partition.max_time_seconds()},
           {"max_nodes", partition.max_nodes()}});
    }
    std::cout
        << nlohmann::json{{"nodes", list}, {"partitions", partitions}}.dump(2)
        << "\n";
    return 0;
  }
  if (options.detail) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i > 0) std::cout << "\n";
      PrintNodeDetail(nodes[i]);
    }
    return 0;
  }
  // RenderTable sizes columns with the header; -h drops it afterwards.
  auto print = [&](const std::vector<std::vector<std::string>>& rows) {
    std::string table = RenderTable(rows);
    if (options.no_header) table.erase(0, table.find('\n') + 1);
    std::cout << table;
  };
  if (!options.format.empty()) {
    absl::StatusOr<SinfoFormat> format = SinfoFormat::Parse(options.format);
    if (!format.ok()) {
      std::cerr << "gantry nodes: error: " << format.status().message() << "\n";
      return 1;
    }
    if (!options.no_header) std::cout << format->Header();
    for (const std::string& line : format->Rows(
             nodes,
             {response.partitions().begin(), response.partitions().end()},
             filter, options.per_node)) {
      std::cout << line;
    }
    return 0;
  }
  if (!options.per_node) {
    print(SinfoSummary(
        nodes, {response.partitions().begin(), response.partitions().end()},
        filter));
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"NODE", "STATE", "PARTITIONS", "CPUS(A/T)", "GPUS(A/T)", "MEMORY_MB",
       "HCAS", "LEAF", "ADDRESS", "REASON"}};
  for (const v1::NodeRecord& node : nodes) {
    std::string state = NodeStateName(node.state());
    if (node.health_problems_size() > 0) state += "+degraded";
    if (node.drained()) state += "+drain";
    if (node.hot_spare()) state += "+spare";
    if (node.simulated()) state += "+sim";
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
  print(rows);
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
  MakePrintable(report, json ? OutputKind::kJson : OutputKind::kTerminal);
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

}  // namespace gantry::cli
