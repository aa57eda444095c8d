#include "cli/views/output_format.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/views/goodput_view.h"
#include "cli/views/preflight_view.h"
#include "common/cluster_name.h"
#include "common/hostlist.h"
#include "common/option_values.h"
#include "common/terminal_text.h"

namespace gantry::cli {

std::string StateName(v1::JobState state) {
  switch (state) {
    case v1::PENDING:
      return "PENDING";
    case v1::RUNNING:
      return "RUNNING";
    case v1::COMPLETED:
      return "COMPLETED";
    case v1::FAILED:
      return "FAILED";
    case v1::CANCELLED:
      return "CANCELLED";
    case v1::TIMEOUT:
      return "TIMEOUT";
    case v1::NODE_FAIL:
      return "NODE_FAIL";
    case v1::OUT_OF_MEMORY:
      return "OUT_OF_MEMORY";
    case v1::DEADLINE:
      return "DEADLINE";
    default:
      return "UNKNOWN";
  }
}

std::string StateShort(v1::JobState state) {
  switch (state) {
    case v1::PENDING:
      return "PD";
    case v1::RUNNING:
      return "R";
    case v1::COMPLETED:
      return "CD";
    case v1::FAILED:
      return "F";
    case v1::CANCELLED:
      return "CA";
    case v1::TIMEOUT:
      return "TO";
    case v1::NODE_FAIL:
      return "NF";
    case v1::OUT_OF_MEMORY:
      return "OOM";
    case v1::DEADLINE:
      return "DL";
    default:
      return "?";
  }
}

std::string NodeStateName(v1::NodeState state) {
  switch (state) {
    case v1::NODE_UP:
      return "up";
    case v1::NODE_UNREACHABLE:
      return "unreachable";
    case v1::NODE_DOWN:
      return "down";
    default:
      return "unknown";
  }
}

std::string FormatDuration(int64_t seconds) {
  return FormatTimeLimit(seconds < 0 ? 0 : static_cast<uint64_t>(seconds));
}

std::string FormatTime(int64_t epoch_ms) {
  if (epoch_ms <= 0) return "Unknown";
  std::time_t seconds = epoch_ms / 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &local);
  return buffer;
}

std::string JobQos(const v1::JobSpec& spec) {
  return spec.qos().empty() ? kDefaultQos : spec.qos();
}

std::string JobNodeList(const v1::JobRecord& job) {
  std::vector<std::string> nodes;
  for (const v1::NodeAllocation& share : job.allocation())
    nodes.push_back(share.node());
  return CompressHostlist(nodes);
}

std::string RenderTable(
    const std::vector<std::vector<std::string>>& unescaped_rows) {
  // Cells hold user-supplied text: never let it drive the terminal.
  std::vector<std::vector<std::string>> rows = unescaped_rows;
  for (auto& row : rows) {
    for (std::string& cell : row) cell = EscapeForTerminal(cell);
  }
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (row.size() > widths.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string& cell = row[c];
      bool numeric = r > 0 && !cell.empty() &&
                     std::all_of(cell.begin(), cell.end(), [](char ch) {
                       return std::isdigit(static_cast<unsigned char>(ch)) ||
                              ch == ':' || ch == '-';
                     });
      std::string pad(widths[c] - cell.size(), ' ');
      bool last = c + 1 == row.size();
      line += numeric ? pad + cell : (last ? cell : cell + pad);
      if (!last) line += "  ";
    }
    out += line + "\n";
  }
  return out;
}

uint32_t StepTaskCount(const v1::StepRecord& step) {
  uint32_t tasks = 0;
  for (const v1::NodeAllocation& share : step.nodes()) {
    tasks += share.rank_count();
  }
  return tasks;
}

std::vector<std::string> StepNodeNames(const v1::StepRecord& step) {
  std::vector<std::string> names;
  for (const v1::NodeAllocation& share : step.nodes()) {
    names.push_back(share.node());
  }
  return names;
}

namespace {

// A time that may not be known: null rather than "Unknown".
nlohmann::json OptionalTime(int64_t epoch_ms) {
  return epoch_ms > 0 ? nlohmann::json(FormatTime(epoch_ms)) : nlohmann::json();
}

}  // namespace

namespace {

// --dataset declarations, as {name, path} objects in the job's order.
nlohmann::json DatasetsToJson(const v1::JobSpec& spec) {
  nlohmann::json datasets = nlohmann::json::array();
  for (const v1::DatasetRef& dataset : spec.datasets()) {
    datasets.push_back(
        {{"name", dataset.name()},
         {"path", dataset.path()},
         {"version_by", dataset.version_by() == v1::DATASET_VERSION_BY_CONTENT
                            ? "content"
                            : "metadata"}});
  }
  return datasets;
}

// Each node's staging of each dataset, for the current attempt.
nlohmann::json DatasetStagingToJson(const v1::JobRecord& job) {
  nlohmann::json staging = nlohmann::json::array();
  for (const v1::DatasetStaging& entry : job.dataset_staging()) {
    staging.push_back({{"node", entry.node()},
                       {"dataset", entry.dataset()},
                       {"bytes_done", entry.bytes_done()},
                       {"bytes_total", entry.bytes_total()},
                       {"done", entry.done()},
                       {"hit", entry.hit()},
                       {"bytes_copied", entry.bytes_copied()}});
  }
  return staging;
}

// A pending job's datasets staged ahead onto its reserved nodes (GetJob
// replies only: empty elsewhere).
nlohmann::json StagedAheadToJson(const v1::JobRecord& job) {
  nlohmann::json ahead = nlohmann::json::array();
  for (const v1::DatasetStagedAhead& entry : job.staged_ahead()) {
    ahead.push_back({{"node", entry.node()},
                     {"dataset", entry.dataset()},
                     {"state", StagedAheadStateName(entry.state())},
                     {"message", entry.message()},
                     {"bytes_total", entry.bytes_total()},
                     {"bytes_copied", entry.bytes_copied()},
                     {"sent", FormatTime(entry.sent_ms())}});
  }
  return ahead;
}

}  // namespace

const char* StagedAheadStateName(v1::DatasetStagedAhead::State state) {
  switch (state) {
    case v1::DatasetStagedAhead::DONE:
      return "done";
    case v1::DatasetStagedAhead::FAILED:
      return "failed";
    default:
      return "copying";
  }
}

nlohmann::json JobToJson(const v1::JobRecord& job, int64_t now_ms) {
  const v1::JobSpec& spec = job.spec();
  nlohmann::json allocation = nlohmann::json::array();
  uint32_t tasks = 0;
  for (const v1::NodeAllocation& share : job.allocation()) {
    tasks += share.rank_count();
    allocation.push_back(
        {{"node", share.node()},
         {"cpus", share.cpus()},
         {"gpus", std::vector<uint32_t>(share.gpu_indices().begin(),
                                        share.gpu_indices().end())},
         {"memory_mb", share.mem_mb()},
         {"first_rank", share.first_rank()},
         {"ranks", share.rank_count()}});
  }
  nlohmann::json exits = nlohmann::json::array();
  for (const v1::RankExit& exit : job.exits()) {
    exits.push_back({{"rank", exit.rank()},
                     {"node", exit.node()},
                     {"exit_code", exit.exit_code()},
                     {"signal", exit.signal()}});
  }
  nlohmann::json attempts = nlohmann::json::array();
  for (const v1::AttemptRecord& attempt : job.attempts()) {
    attempts.push_back(
        {{"attempt", attempt.attempt()},
         {"nodes", std::vector<std::string>(attempt.nodes().begin(),
                                            attempt.nodes().end())},
         {"start_time", FormatTime(attempt.start_time_ms())},
         {"end_time", FormatTime(attempt.end_time_ms())},
         {"end_reason", attempt.end_reason()},
         {"end_detail", attempt.end_detail()},
         {"node_fault", attempt.node_fault()},
         {"resumed_from", attempt.resumed_from()},
         {"preflight", PreflightJson(attempt)},
         // Goodput times (null: not known or did not happen).
         {"ranks_running_time", OptionalTime(attempt.ranks_running_ms())},
         {"first_progress_time", OptionalTime(attempt.first_progress_ms())},
         {"last_checkpoint_time", OptionalTime(attempt.last_checkpoint_ms())},
         {"fault_time", OptionalTime(attempt.fault_time_ms())}});
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const v1::StepRecord& step : job.steps()) {
    steps.push_back({{"id", step.id()},
                     {"attempt", step.attempt()},
                     {"command", std::vector<std::string>(step.argv().begin(),
                                                          step.argv().end())},
                     {"nodes", StepNodeNames(step)},
                     {"tasks", StepTaskCount(step)},
                     {"state", step.end_time_ms() ? "ENDED" : "RUNNING"},
                     {"exit_code", step.exit_code()},
                     {"start_time", FormatTime(step.start_time_ms())},
                     {"end_time", FormatTime(step.end_time_ms())},
                     {"end_detail", step.end_detail()}});
  }
  int64_t end = job.end_time_ms() ? job.end_time_ms() : now_ms;
  return {
      {"job_id", job.id()},
      // Array tasks (--array); null for other jobs.
      {"array_job_id", job.array_job_id() ? nlohmann::json(job.array_job_id())
                                          : nlohmann::json()},
      {"array_task_id", job.array_job_id() ? nlohmann::json(job.array_task_id())
                                           : nlohmann::json()},
      {"array",
       spec.array().empty() ? nlohmann::json() : nlohmann::json(spec.array())},
      {"name", spec.name()},
      // Its own jobs' only (gantryd shows nobody else's): how a user whose
      // submission's outcome was unknown finds the job it made.
      {"submission_token", job.submission_token()},
      {"user", job.user()},
      {"uid", job.uid()},
      {"state", StateName(job.state())},
      {"reason", job.reason()},
      {"reason_detail", job.reason_detail()},
      {"partition", spec.partition()},
      {"priority", static_cast<int64_t>(job.priority())},
      {"dependency", spec.dependency()},
      {"required_nodes", std::vector<std::string>(spec.required_nodes().begin(),
                                                  spec.required_nodes().end())},
      {"excluded_nodes", std::vector<std::string>(spec.excluded_nodes().begin(),
                                                  spec.excluded_nodes().end())},
      {"constraint", spec.constraint()},
      {"gpu_type", spec.gpu_type()},
      {"nodes", spec.nodes()},
      // --nodes=MIN-MAX: nodes is MAX; the attempt's own count is
      // allocated_nodes (0 while pending).
      {"min_nodes", spec.min_nodes() > 0 ? spec.min_nodes() : spec.nodes()},
      {"allocated_nodes", job.allocation_size()},
      {"elastic", spec.elastic()},
      {"memory_checkpoints", spec.memory_checkpoints()},
      {"ntasks", tasks
                     ? tasks
                     : (spec.ntasks() ? spec.ntasks()
                                      : spec.nodes() * spec.ntasks_per_node())},
      {"ntasks_per_node", spec.ntasks_per_node()},
      {"cpus_per_task", spec.cpus_per_task()},
      {"gpus_per_node", spec.gpus_per_node()},
      // -G/--gpus: the job's total as asked (0: asked per node or task).
      {"gpus", spec.gpus()},
      {"memory_per_node_mb", spec.mem_per_node_mb()},
      {"time_limit_seconds", spec.time_limit_seconds()},
      {"nodelist", JobNodeList(job)},
      {"allocation", allocation},
      {"attempt", job.attempt()},
      // Attempts lost to a controller or agent crash: not charged to
      // --max-restarts.
      {"uncharged_attempts", job.uncharged_attempts()},
      {"exit_code", job.exit_code()},
      {"exit_signal", job.exit_signal()},
      {"rank_exits", exits},
      {"submit_time", FormatTime(job.submit_time_ms())},
      {"start_time", FormatTime(job.start_time_ms())},
      {"end_time", FormatTime(job.end_time_ms())},
      {"elapsed_seconds",
       job.start_time_ms() ? (end - job.start_time_ms()) / 1000 : 0},
      {"working_dir", spec.working_dir()},
      {"output", job.output_path()},
      {"error",
       job.error_path().empty() ? job.output_path() : job.error_path()},
      {"master_port", job.master_port()},
      {"checkpoint_dir", spec.checkpoint_dir()},
      {"datasets", DatasetsToJson(spec)},
      {"dataset_staging", DatasetStagingToJson(job)},
      {"staged_ahead", StagedAheadToJson(job)},
      {"latest_checkpoint",
       {{"path", job.latest_checkpoint().path()},
        {"step", job.latest_checkpoint().step()},
        {"source", job.latest_checkpoint().source()},
        {"time", FormatTime(job.latest_checkpoint().time_ms())},
        {"write_seconds", job.latest_checkpoint().write_seconds()}}},
      {"memory_checkpoint",
       job.has_memory_checkpoint()
           ? nlohmann::json{{"step", job.memory_checkpoint().step()},
                            {"time",
                             FormatTime(job.memory_checkpoint().time_ms())}}
           : nlohmann::json()},
      {"memory_restore_step", job.has_memory_restore_step()
                                  ? nlohmann::json(job.memory_restore_step())
                                  : nlohmann::json()},
      {"checkpoint_cost_seconds", job.checkpoint_cost_seconds()},
      {"checkpoint_interval_seconds", job.checkpoint_interval_seconds()},
      {"checkpoint_interval_basis", job.checkpoint_interval_basis()},
      {"max_restarts", spec.has_max_restarts()
                           ? nlohmann::json(spec.max_restarts())
                           : nlohmann::json()},
      {"hang_timeout_seconds", spec.hang_timeout_seconds()},
      {"attempts", attempts},
      {"script_once", spec.script_once()},
      {"steps", steps},
      // GetJob replies only (gantry job ID): null elsewhere.
      {"goodput",
       job.has_goodput() ? GoodputToJson(job.goodput()) : nlohmann::json()},
  };
}

nlohmann::json NodeToJson(const v1::NodeRecord& node) {
  const v1::NodeInventory& inventory = node.inventory();
  nlohmann::json gpus = nlohmann::json::array();
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    const std::vector<std::string> switches(gpu.pcie_switches().begin(),
                                            gpu.pcie_switches().end());
    gpus.push_back({{"index", gpu.index()},
                    {"vendor", gpu.vendor()},
                    {"model", gpu.model()},
                    {"pci_bus_id", gpu.pci_bus_id()},
                    {"numa_node", gpu.numa_node()},
                    {"nearest_hca", gpu.nearest_hca()},
                    {"hca_locality", gpu.hca_locality()},
                    {"pcie_switches", switches},
                    {"host_bridge", gpu.host_bridge()},
                    {"package", gpu.package()}});
  }
  nlohmann::json network = nlohmann::json::array();
  for (const v1::NetworkDevice& device : inventory.network_devices()) {
    nlohmann::json ports = nlohmann::json::array();
    for (const v1::HcaPort& port : device.ports()) {
      ports.push_back({{"port", port.port()},
                       {"state", port.state()},
                       {"link_layer", port.link_layer()},
                       {"rate_gbps", port.rate_gbps()},
                       {"lid", port.lid()},
                       {"port_guid", port.port_guid()},
                       {"roce_v2_gid_index", port.roce_v2_gid_index()}});
    }
    network.push_back({{"name", device.name()},
                       {"kind", device.kind()},
                       {"pci_bus_id", device.pci_bus_id()},
                       {"numa_node", device.numa_node()},
                       {"role", device.role()},
                       {"node_guid", device.node_guid()},
                       {"gpus", std::vector<uint32_t>(device.gpus().begin(),
                                                      device.gpus().end())},
                       {"ports", ports}});
  }
  return {
      {"name", node.name()},
      {"state", NodeStateName(node.state())},
      {"reason", node.reason()},
      {"drained", node.drained()},
      {"drain_reason", node.drain_reason()},
      {"hot_spare", node.hot_spare()},
      {"simulated", node.simulated()},
      {"features", std::vector<std::string>(node.features().begin(),
                                            node.features().end())},
      {"health_problems",
       std::vector<std::string>(node.health_problems().begin(),
                                node.health_problems().end())},
      {"leaf_switches", std::vector<std::string>(node.leaf_switches().begin(),
                                                 node.leaf_switches().end())},
      {"address", node.address()},
      {"partitions", std::vector<std::string>(node.partitions().begin(),
                                              node.partitions().end())},
      {"cpus", inventory.cpus()},
      {"cpus_allocated", node.cpus_allocated()},
      {"cores", inventory.cores()},
      {"sockets", inventory.packages()},
      {"numa_nodes", inventory.numa_nodes()},
      {"memory_mb", inventory.memory_mb()},
      {"memory_allocated_mb", node.mem_allocated_mb()},
      {"gpus", gpus},
      {"gpus_allocated", node.gpus_allocated()},
      {"network_devices", network},
      {"inventory_source", inventory.source()},
      {"agent_version", node.agent_version()},
      {"registered_time", FormatTime(node.registered_time_ms())},
      {"last_seen", FormatTime(node.last_seen_ms())},
  };
}

nlohmann::json EventToJson(const v1::EventRecord& event) {
  return {{"sequence", event.sequence()},
          {"time", FormatTime(event.time_ms())},
          {"kind", event.kind()},
          {"node", event.node()},
          {"detail", event.detail()}};
}

}  // namespace gantry::cli
