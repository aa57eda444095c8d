#include "daemon/rpc/agent_stream_guard.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/terminal_text.h"
#include "daemon/controller/core/request_validation.h"

namespace gantry {
namespace {

// Far above any real machine, far below what would hurt the controller.
constexpr size_t kMaxShortString = 256;   // names, addresses, ids, states
constexpr size_t kMaxText = 64 << 10;     // a launch failure's message
constexpr size_t kMaxPath = 4096;         // a checkpoint's path
constexpr uint32_t kMaxCpus = 1 << 16;    // hardware threads of one node
constexpr uint32_t kMaxNumaNodes = 4096;  // also packages
constexpr int kMaxPcieSwitchDepth = 16;   // switches above one GPU
constexpr uint64_t kMaxMemoryMb = uint64_t{1} << 30;  // a petabyte
constexpr int kMaxGpus = 1024;
constexpr int kMaxDevices = 256;    // network devices, ports of one, problems
constexpr int kMaxRanks = 1 << 16;  // ranks one node reports in a Register
constexpr double kMaxRateGbps = 1e6;
constexpr double kMaxLoad = 1e6;
constexpr int kMaxCachedDatasets = 4096;  // entries of one node's cache
constexpr int kMaxPinningJobs = 1024;     // jobs pinning one cached entry

absl::Status Invalid(const std::string& what) {
  return absl::InvalidArgumentError(what);
}

absl::Status CheckLength(const char* what, const std::string& value,
                         size_t limit) {
  if (value.size() <= limit) return absl::OkStatus();
  return Invalid(absl::StrCat(what, " of ", value.size(),
                              " bytes (the limit is ", limit, ")"));
}

absl::Status CheckCount(const char* what, int count, int limit) {
  if (count <= limit) return absl::OkStatus();
  return Invalid(absl::StrCat(count, " ", what, " (the limit is ", limit, ")"));
}

// Names, ids and states the agent reads from the hardware or from its
// administrator's configuration, shown by `gantry nodes`: one line of
// printable text. (Free text that jobs can influence, such as a launch
// failure's message or a checkpoint path from a marker file, is only
// bounded: refusing it would cut the node off, and the CLI escapes it.)
absl::Status CheckLengths(const char* what,
                          std::initializer_list<const std::string*> values,
                          size_t limit) {
  for (const std::string* value : values) {
    if (absl::Status s = CheckDisplayText(what, *value, limit); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// At most `limit` items, each passing `validate`.
template <typename Items, typename Validate>
absl::Status CheckEach(const char* what, const Items& items, int limit,
                       Validate validate) {
  if (absl::Status s = CheckCount(what, items.size(), limit); !s.ok()) {
    return s;
  }
  for (const auto& item : items) {
    if (absl::Status s = validate(item); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool ValidNumaNode(int32_t numa_node) {
  return numa_node >= -1 && numa_node < static_cast<int32_t>(kMaxNumaNodes);
}

absl::Status ValidatePort(const v1::HcaPort& port) {
  if (absl::Status s = CheckLengths("an HCA port field",
                                    {&port.state(), &port.link_layer(),
                                     &port.port_guid(), &port.netdev()},
                                    kMaxShortString);
      !s.ok()) {
    return s;
  }
  if (!std::isfinite(port.rate_gbps()) || port.rate_gbps() < 0 ||
      port.rate_gbps() > kMaxRateGbps) {
    return Invalid(
        absl::StrCat("HCA port rate of ", port.rate_gbps(), " Gb/s"));
  }
  return absl::OkStatus();
}

absl::Status ValidateDevice(const v1::NetworkDevice& device) {
  if (absl::Status s =
          CheckLengths("a network device field",
                       {&device.name(), &device.kind(), &device.pci_bus_id(),
                        &device.role(), &device.node_guid()},
                       kMaxShortString);
      !s.ok()) {
    return s;
  }
  if (!ValidNumaNode(device.numa_node())) {
    return Invalid(absl::StrCat("network device ", device.name(),
                                " on NUMA node ", device.numa_node()));
  }
  if (absl::Status s = CheckCount("GPUs near one network device",
                                  device.gpus_size(), kMaxGpus);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckEach("ports on one network device", device.ports(),
                                 kMaxDevices, ValidatePort);
      !s.ok()) {
    return s;
  }
  return absl::OkStatus();
}

absl::Status ValidateInventory(const v1::NodeInventory& inventory) {
  if (inventory.cpus() > kMaxCpus || inventory.cores() > inventory.cpus() ||
      inventory.packages() > kMaxNumaNodes ||
      inventory.numa_nodes() > kMaxNumaNodes) {
    return Invalid(absl::StrCat("inventory of ", inventory.packages(),
                                " packages, ", inventory.cores(), " cores, ",
                                inventory.cpus(), " CPUs and ",
                                inventory.numa_nodes(), " NUMA nodes"));
  }
  if (inventory.memory_mb() > kMaxMemoryMb) {
    return Invalid(
        absl::StrCat("inventory of ", inventory.memory_mb(), " MB of memory"));
  }
  if (absl::Status s =
          CheckLength("inventory source", inventory.source(), kMaxPath);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckCount("GPUs", inventory.gpus_size(), kMaxGpus);
      !s.ok()) {
    return s;
  }
  // Scheduling binds GPUs by index: they must be 0..n-1, each once.
  std::vector<bool> seen(inventory.gpus_size(), false);
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    if (gpu.index() >= seen.size() || seen[gpu.index()]) {
      return Invalid(absl::StrCat("inventory of ", inventory.gpus_size(),
                                  " GPUs lists GPU index ", gpu.index(),
                                  " twice or out of range"));
    }
    seen[gpu.index()] = true;
    if (absl::Status s = CheckLengths(
            "a GPU field",
            {&gpu.vendor(), &gpu.model(), &gpu.pci_bus_id(), &gpu.nearest_hca(),
             &gpu.hca_locality(), &gpu.host_bridge()},
            kMaxShortString);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckEach(
            "PCIe switches above one GPU", gpu.pcie_switches(),
            kMaxPcieSwitchDepth,
            [](const std::string& name) {
              return CheckDisplayText("a PCIe switch", name, kMaxShortString);
            });
        !s.ok()) {
      return s;
    }
    if (!ValidNumaNode(gpu.numa_node()) || !ValidNumaNode(gpu.package())) {
      return Invalid(absl::StrCat("GPU ", gpu.index(), " on NUMA node ",
                                  gpu.numa_node(), " of package ",
                                  gpu.package()));
    }
  }
  if (absl::Status s = CheckCount(
          "network devices", inventory.network_devices_size(), kMaxDevices);
      !s.ok()) {
    return s;
  }
  for (const v1::NetworkDevice& device : inventory.network_devices()) {
    if (absl::Status s = ValidateDevice(device); !s.ok()) return s;
    for (uint32_t gpu : device.gpus()) {
      if (gpu >= seen.size()) {
        return Invalid(absl::StrCat("network device ", device.name(),
                                    " is near GPU ", gpu, " of ",
                                    inventory.gpus_size()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRankId(const v1::RankId& rank) {
  if (rank.job_id() == 0) return Invalid("a rank of job 0");
  return absl::OkStatus();
}

absl::Status ValidateRankEvent(const v1::RankEvent& event) {
  switch (event.kind()) {
    case v1::RankEvent::STARTED:
    case v1::RankEvent::EXITED:
    case v1::RankEvent::LAUNCH_FAILED:
      break;
    default:
      return Invalid(absl::StrCat("rank event of unknown kind ",
                                  static_cast<int>(event.kind())));
  }
  if (absl::Status s = ValidateRankId(event.rank()); !s.ok()) return s;
  if (event.exit_code() < 0 || event.exit_code() > 255 || event.signal() < 0 ||
      event.signal() > 127 || event.pid() < 0) {
    return Invalid(absl::StrCat("rank event with exit code ", event.exit_code(),
                                ", signal ", event.signal(), ", pid ",
                                event.pid()));
  }
  return CheckLength("rank event message", event.message(), kMaxText);
}

// A dataset's name, version and source come from the job's declaration and
// the files it names: bounded, not refused as display text.
absl::Status ValidateCachedDataset(const v1::CachedDatasetEntry& entry) {
  if (absl::Status s =
          CheckLength("cached dataset name", entry.name(), kMaxShortString);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckLength("cached dataset version", entry.version(),
                                   kMaxShortString);
      !s.ok()) {
    return s;
  }
  if (entry.pinned_by_jobs_size() > kMaxPinningJobs) {
    return Invalid("a cached dataset pinned by too many jobs");
  }
  return CheckLength("cached dataset source", entry.source(), kMaxPath);
}

absl::Status ValidateCacheReport(const v1::DatasetCacheReport& report) {
  return CheckEach("cached datasets", report.entries(), kMaxCachedDatasets,
                   ValidateCachedDataset);
}

absl::Status ValidateRegister(const v1::Register& reg) {
  if (!ValidNodeName(reg.node_name())) {
    return Invalid(absl::StrCat(
        "invalid node name \"",
        reg.node_name().substr(0, std::min<size_t>(reg.node_name().size(), 80)),
        "\""));
  }
  if (absl::Status s =
          CheckLengths("a registration field",
                       {&reg.address(), &reg.boot_id(), &reg.agent_version()},
                       kMaxShortString);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckEach("features", reg.features(), kMaxDevices,
                                 [](const std::string& feature) {
                                   return CheckDisplayText("a feature", feature,
                                                           kMaxShortString);
                                 });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateInventory(reg.inventory()); !s.ok()) return s;
  if (absl::Status s =
          CheckEach("running ranks", reg.running(), kMaxRanks, ValidateRankId);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckEach("unacknowledged exits", reg.unacknowledged_exits(),
                    kMaxRanks, ValidateRankEvent);
      !s.ok()) {
    return s;
  }
  return ValidateCacheReport(reg.dataset_cache());
}

absl::Status ValidateHeartbeat(const v1::Heartbeat& heartbeat) {
  if (!std::isfinite(heartbeat.load_1m()) || heartbeat.load_1m() < 0 ||
      heartbeat.load_1m() > kMaxLoad) {
    return Invalid(
        absl::StrCat("heartbeat with a load of ", heartbeat.load_1m()));
  }
  if (heartbeat.running_ranks() > kMaxCpus * 16u) {
    return Invalid(absl::StrCat("heartbeat with ", heartbeat.running_ranks(),
                                " running ranks"));
  }
  if (absl::Status s =
          CheckEach("health problems", heartbeat.health_problems(), kMaxDevices,
                    [](const std::string& problem) {
                      return CheckLength("a health problem", problem, 1024);
                    });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckEach("port updates", heartbeat.port_updates(),
                                 kMaxDevices, ValidateDevice);
      !s.ok()) {
    return s;
  }
  return ValidateCacheReport(heartbeat.dataset_cache());
}

absl::Status ValidateCheckpoint(const v1::CheckpointReport& report) {
  if (report.job_id() == 0) return Invalid("a checkpoint of job 0");
  if (absl::Status s = CheckLength("checkpoint path", report.path(), kMaxPath);
      !s.ok()) {
    return s;
  }
  return CheckLength("checkpoint source", report.source(), kMaxShortString);
}

absl::Status ValidateDatasetProgress(const v1::DatasetProgress& progress) {
  if (progress.job_id() == 0) return Invalid("dataset progress of job 0");
  if (progress.bytes_done() > progress.bytes_total()) {
    return Invalid("dataset progress past its total");
  }
  return CheckLength("dataset name", progress.dataset(), kMaxShortString);
}

absl::Status ValidateDatasetCacheResult(const v1::DatasetCacheResult& result) {
  if (result.request_id() == 0) return Invalid("a dataset cache answer to 0");
  if (absl::Status s =
          CheckLength("dataset cache answer", result.message(), kMaxPath);
      !s.ok()) {
    return s;
  }
  return CheckLength("dataset version", result.version(), kMaxShortString);
}

absl::Status ValidatePreflightResult(const v1::PreflightResult& result) {
  if (result.job_id() == 0) return Invalid("a pre-flight result of job 0");
  for (const std::string* text :
       {&result.problem(), &result.send_problem(), &result.receive_problem(),
        &result.gloo_problem()}) {
    if (absl::Status s = CheckLength("pre-flight problem", *text, kMaxPath);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

TokenBucket::TokenBucket(double rate_per_second, double burst, int64_t now_ms)
    : rate_per_ms_(rate_per_second / 1000),
      burst_(burst),
      tokens_(burst),
      last_ms_(now_ms) {}

bool TokenBucket::TryTake(int64_t now_ms) {
  if (now_ms > last_ms_) {
    tokens_ =
        std::min(burst_, tokens_ + static_cast<double>(now_ms - last_ms_) *
                                       rate_per_ms_);
    last_ms_ = now_ms;
  }
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

AgentStreamLimits AgentStreamLimitsFor(int64_t heartbeat_interval_ms,
                                       uint32_t messages_per_heartbeat,
                                       size_t max_message_bytes) {
  const double per_second =
      static_cast<double>(messages_per_heartbeat) * 1000.0 /
      static_cast<double>(std::max<int64_t>(heartbeat_interval_ms, 1));
  return {.messages_per_second = per_second,
          .burst = 10.0 * messages_per_heartbeat,
          .max_message_bytes = max_message_bytes};
}

absl::Status ValidateAgentMessage(const v1::AgentMessage& message) {
  switch (message.body_case()) {
    case v1::AgentMessage::kRegister:
      return ValidateRegister(message.register_());
    case v1::AgentMessage::kHeartbeat:
      return ValidateHeartbeat(message.heartbeat());
    case v1::AgentMessage::kRankEvent:
      return ValidateRankEvent(message.rank_event());
    case v1::AgentMessage::kCheckpoint:
      return ValidateCheckpoint(message.checkpoint());
    case v1::AgentMessage::kPreflightResult:
      return ValidatePreflightResult(message.preflight_result());
    case v1::AgentMessage::kDatasetProgress:
      return ValidateDatasetProgress(message.dataset_progress());
    case v1::AgentMessage::kDatasetCacheResult:
      return ValidateDatasetCacheResult(message.dataset_cache_result());
    case v1::AgentMessage::BODY_NOT_SET:
      break;
  }
  return Invalid("a message of no kind this controller knows");
}

AgentStreamGuard::AgentStreamGuard(const AgentStreamLimits& limits,
                                   int64_t now_ms)
    : limits_(limits),
      bucket_(limits.messages_per_second, limits.burst, now_ms) {}

absl::Status AgentStreamGuard::Admit(size_t message_bytes, int64_t now_ms) {
  if (message_bytes > limits_.max_message_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a message of ", message_bytes, " bytes (the limit is ",
                     limits_.max_message_bytes, ")"));
  }
  if (!bucket_.TryTake(now_ms)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("flooding: more than ", limits_.messages_per_second,
                     " messages a second (bursts of ", limits_.burst, ")"));
  }
  return absl::OkStatus();
}

absl::Status AgentStreamGuard::Check(const v1::AgentMessage& message) {
  if (node_name_.empty()) {
    if (!message.has_register_()) {
      return Invalid("the first message is not a registration");
    }
    // Named in the log line even when the rest of it is refused.
    const std::string& name = message.register_().node_name();
    if (ValidNodeName(name)) node_name_ = name;
    return ValidateAgentMessage(message);
  }
  if (message.has_register_()) {
    const std::string& name = message.register_().node_name();
    return Invalid(name == node_name_
                       ? std::string("a second registration on one stream")
                       : absl::StrCat("a registration as ", name,
                                      " on the stream of ", node_name_));
  }
  return ValidateAgentMessage(message);
}

}  // namespace gantry
