#include "daemon/controller/core/request_validation.h"

#include <cmath>
#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/dataset_spec.h"
#include "common/request_limits.h"
#include "common/terminal_text.h"

namespace gantry {
namespace {

using limits::kMaxNameBytes;
using limits::kMaxPathBytes;
using limits::kMaxReasonBytes;

// The same bounds ValidateSubmission and the CLI apply, checked here on
// the raw request so that every numeric field has one.
constexpr uint32_t kMaxStepTasks = 1 << 16;
constexpr uint32_t kMaxRestarts = 1000;
constexpr int32_t kMaxSignal = 64;
constexpr uint32_t kMaxWarningSeconds = 65535;

absl::Status AtMost(std::string_view field, uint64_t value, uint64_t limit,
                    std::string_view unit = "") {
  if (value <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(field), " is ", value, std::string(unit),
                   "; the limit is ", limit, std::string(unit)));
}

absl::Status Duration(std::string_view field, uint64_t seconds) {
  if (seconds <= limits::kMaxDurationSeconds) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      std::string(field), " is ", seconds, " s; the limit is ",
      limits::kMaxDurationSeconds, " s (365 days; 0 means no limit)"));
}

template <typename Strings>
absl::Status EachText(std::string_view field, const Strings& values,
                      size_t max_bytes) {
  for (const std::string& value : values) {
    if (absl::Status s = CheckDisplayText(field, value, max_bytes); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// Runs the checks in order and returns the first failure.
absl::Status FirstError(std::initializer_list<absl::Status> checks) {
  for (const absl::Status& check : checks) {
    if (!check.ok()) return check;
  }
  return absl::OkStatus();
}

// A dataset's version_by (--dataset=NAME,version=...) is one Gantry knows.
absl::Status CheckVersionBy(const v1::DatasetRef& ref) {
  if (v1::DatasetVersionBy_IsValid(ref.version_by())) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("dataset ", ref.name(), ": version_by is ", ref.version_by(),
                   ", not one Gantry knows"));
}

absl::Status CheckDatasets(const v1::JobSpec& spec) {
  if (spec.datasets().empty()) return absl::OkStatus();
  if (spec.allocation_only()) {
    // Staging happens before an attempt's ranks start; an allocation starts
    // none (its steps come later, from the client).
    return absl::InvalidArgumentError(
        "--dataset is for batch jobs; an srun or salloc allocation cannot "
        "declare datasets");
  }
  std::vector<DatasetDeclaration> datasets;
  datasets.reserve(spec.datasets_size());
  for (const v1::DatasetRef& ref : spec.datasets()) {
    if (absl::Status known = CheckVersionBy(ref); !known.ok()) return known;
    datasets.push_back({ref.name(), ref.path()});
  }
  return CheckDatasetList(datasets);
}

}  // namespace

bool ValidNodeName(const std::string& name) {
  static const std::regex kPattern("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
  return std::regex_match(name, kPattern);
}

absl::Status ValidateJobSpecFields(const v1::JobSpec& spec) {
  // Every check is evaluated (they are cheap); the first failure, in field
  // order, is reported.
  return FirstError({
      CheckDisplayText("name (--job-name)", spec.name(), kMaxNameBytes),
      AtMost("nodes (--nodes)", spec.nodes(), limits::kMaxNodes),
      AtMost("ntasks_per_node (--ntasks-per-node)", spec.ntasks_per_node(),
             limits::kMaxTasksPerNode),
      AtMost("cpus_per_task (--cpus-per-task)", spec.cpus_per_task(),
             limits::kMaxCpusPerTask),
      AtMost("gpus_per_node (--gpus-per-node)", spec.gpus_per_node(),
             limits::kMaxGpusPerNode),
      AtMost("mem_per_node_mb (--mem)", spec.mem_per_node_mb(),
             limits::kMaxMemoryPerNodeMb, " MB"),
      Duration("time_limit_seconds (--time)", spec.time_limit_seconds()),
      CheckDisplayText("partition (--partition)", spec.partition(),
                       kMaxNameBytes),
      CheckDisplayText("account (--account)", spec.account(), kMaxNameBytes),
      CheckDisplayText("qos (--qos)", spec.qos(), kMaxNameBytes),
      CheckDisplayText("output_pattern (--output)", spec.output_pattern(),
                       kMaxPathBytes),
      CheckDisplayText("error_pattern (--error)", spec.error_pattern(),
                       kMaxPathBytes),
      CheckDisplayText("working_dir (--chdir)", spec.working_dir(),
                       kMaxPathBytes),
      AtMost("script (bytes)", spec.script().size(),
             limits::kMaxBatchScriptBytes),
      CheckDisplayText("submit_dir", spec.submit_dir(), kMaxPathBytes),
      CheckDisplayText("script_path", spec.script_path(), kMaxPathBytes),
      AtMost("ntasks (--ntasks)", spec.ntasks(), limits::kMaxTasks),
      spec.has_max_restarts() ? AtMost("max_restarts (--max-restarts)",
                                       spec.max_restarts(), kMaxRestarts)
                              : absl::OkStatus(),
      Duration("hang_timeout_seconds (--hang-timeout)",
               spec.hang_timeout_seconds()),
      CheckDisplayText("checkpoint_dir (--checkpoint-dir)",
                       spec.checkpoint_dir(), kMaxPathBytes),
      AtMost("max_switches (--switches)", spec.max_switches(), kMaxSwitches),
      Duration("switches_max_wait_seconds (--switches=N@TIME)",
               spec.switches_max_wait_seconds()),
      v1::DatasetLocality_IsValid(spec.dataset_locality())
          ? absl::OkStatus()
          : absl::InvalidArgumentError(
                absl::StrCat("dataset_locality (--dataset-locality) is ",
                             spec.dataset_locality(),
                             "; it must be 0 (topology) or 1 "
                             "(cache)")),
      CheckDisplayText("dependency (--dependency)", spec.dependency(),
                       kMaxDependencyBytes),
      spec.begin_time_ms() < 0
          ? absl::InvalidArgumentError(absl::StrCat(
                "begin_time_ms (--begin) is ", spec.begin_time_ms(),
                "; it must be 0 (at once) or a time after 1970"))
          : AtMost("begin_time_ms (--begin)",
                   static_cast<uint64_t>(spec.begin_time_ms()),
                   limits::kMaxBeginTimeMs, " ms (the end of year 9999)"),
      spec.deadline_ms() < 0
          ? absl::InvalidArgumentError(
                absl::StrCat("deadline_ms (--deadline) is ", spec.deadline_ms(),
                             "; it must be 0 (none) or a time after 1970"))
          : AtMost("deadline_ms (--deadline)",
                   static_cast<uint64_t>(spec.deadline_ms()),
                   limits::kMaxBeginTimeMs, " ms (the end of year 9999)"),
      CheckDisplayText("array (--array)", spec.array(), kMaxArrayBytes),
      EachText("required_nodes (--nodelist)", spec.required_nodes(),
               kMaxNameBytes),
      EachText("excluded_nodes (--exclude)", spec.excluded_nodes(),
               kMaxNameBytes),
      CheckDisplayText("constraint (--constraint)", spec.constraint(),
                       kMaxConstraintBytes),
      spec.warning_signal() < 0
          ? absl::InvalidArgumentError(
                absl::StrCat("warning_signal (--signal) is ",
                             spec.warning_signal(), "; it must be 0 to 64"))
          : AtMost("warning_signal (--signal)",
                   static_cast<uint64_t>(spec.warning_signal()), kMaxSignal),
      AtMost("warning_signal_seconds (--signal=SIG@TIME)",
             spec.warning_signal_seconds(), kMaxWarningSeconds, " s"),
      CheckDisplayText("gpu_type (--gres=gpu:TYPE:N)", spec.gpu_type(),
                       kMaxNameBytes),
      CheckDatasets(spec),
  });
}

absl::Status ValidateClaimedUser(std::string_view user) {
  return CheckDisplayText("user", user, kMaxNameBytes);
}

absl::Status ValidateReportProgressRequest(
    const v1::ReportProgressRequest& request) {
  if (request.step() < -1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "step is ", request.step(), "; it must be -1 (none) or at least 0"));
  }
  if (!std::isfinite(request.step_seconds()) || request.step_seconds() < 0 ||
      request.step_seconds() > 1e9) {
    return absl::InvalidArgumentError(
        "step_seconds must be a number of seconds from 0 to 1e9");
  }
  return FirstError({
      CheckDisplayText("checkpoint_path", request.checkpoint_path(),
                       kMaxPathBytes),
      ValidateClaimedUser(request.user()),
  });
}

absl::Status ValidateDrainRequest(const v1::DrainRequest& request) {
  return FirstError({
      EachText("nodes", request.nodes(), kMaxNameBytes),
      CheckDisplayText("reason (--reason)", request.reason(), kMaxReasonBytes),
      ValidateClaimedUser(request.user()),
  });
}

absl::Status ValidateImportTopologyRequest(
    const v1::ImportTopologyRequest& request) {
  // The file's own size limit is the controller's (64 MiB); here only its
  // characters: lines, but no escape sequences in switch names.
  return FirstError({
      CheckDisplayText("the topology file", request.text(),
                       request.text().size(), LineBreaks::kAllowed),
      CheckDisplayText("format (--format)", request.format(), kMaxNameBytes),
      CheckDisplayText("source (the file name)", request.source(),
                       kMaxPathBytes),
      ValidateClaimedUser(request.user()),
  });
}

absl::Status ValidateLaunchStepRequestFields(
    const v1::LaunchStepRequest& request) {
  for (const std::string& arg : request.argv()) {
    if (arg.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          "argv: a command-line argument contains a NUL byte");
    }
  }
  for (const auto& [key, value] : request.environment()) {
    if (key.empty() || key.find('=') != std::string::npos ||
        key.find('\0') != std::string::npos ||
        value.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("environment: invalid variable \"",
                       EscapeForTerminal(key.substr(0, 80)),
                       "\" (a name without '=' or NUL, a value without NUL)"));
    }
  }
  return FirstError({
      CheckDisplayText("working_dir (--chdir)", request.working_dir(),
                       kMaxPathBytes),
      AtMost("nodes (--nodes)", request.nodes(), limits::kMaxNodes),
      AtMost("ntasks (--ntasks)", request.ntasks(), kMaxStepTasks),
      AtMost("ntasks_per_node (--ntasks-per-node)", request.ntasks_per_node(),
             limits::kMaxTasksPerNode),
      AtMost("cpus_per_task (--cpus-per-task)", request.cpus_per_task(),
             limits::kMaxCpusPerTask),
      AtMost("gpus_per_task (--gpus-per-task)", request.gpus_per_task(),
             limits::kMaxGpusPerNode),
      EachText("nodelist (--nodelist)", request.nodelist(), kMaxNameBytes),
      Duration("wait_seconds (--wait)", request.wait_seconds()),
      AtMost("io_port", request.io_port(), 65535),
      CheckDisplayText("io_token", request.io_token(), kMaxTokenBytes),
      CheckDisplayText("caller_node", request.caller_node(), kMaxNameBytes),
      CheckDisplayText("io_host", request.io_host(), kMaxNameBytes),
      ValidateClaimedUser(request.user()),
  });
}

namespace {

absl::Status CheckCacheNodes(
    const google::protobuf::RepeatedPtrField<std::string>& nodes) {
  if (absl::Status count = AtMost("nodes (--nodes)", nodes.size(),
                                  kMaxCacheRequestNodes, " names");
      !count.ok()) {
    return count;
  }
  for (const std::string& node : nodes) {
    if (!ValidNodeName(node)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "nodes (--nodes): \"", EscapeForTerminal(node.substr(0, 80)),
          "\" is not a node name"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckCacheWait(uint32_t seconds) {
  return AtMost("wait_seconds (--timeout)", seconds, kMaxCacheWaitSeconds,
                " s");
}

// A NAME as --dataset takes it, the message saying which option.
absl::Status CheckCacheDatasetName(std::string_view field,
                                   std::string_view name) {
  if (absl::Status s = CheckDatasetName(name); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(field), ": ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateListDatasetCacheRequest(
    const v1::ListDatasetCacheRequest& request) {
  return FirstError({
      CheckCacheNodes(request.nodes()),
      request.dataset().empty()
          ? absl::OkStatus()
          : CheckCacheDatasetName("dataset (--dataset)", request.dataset()),
      ValidateClaimedUser(request.user()),
  });
}

absl::Status ValidatePrefetchDatasetRequest(
    const v1::PrefetchDatasetRequest& request) {
  if (request.nodes().empty()) {
    return absl::InvalidArgumentError(
        "a prefetch needs the nodes to copy to (--nodes)");
  }
  std::vector<DatasetDeclaration> dataset = {
      {request.dataset().name(), request.dataset().path()}};
  return FirstError({
      CheckCacheNodes(request.nodes()),
      CheckDatasetList(dataset),
      CheckVersionBy(request.dataset()),
      CheckCacheWait(request.wait_seconds()),
      ValidateClaimedUser(request.user()),
  });
}

absl::Status ValidateEvictDatasetRequest(
    const v1::EvictDatasetRequest& request) {
  return FirstError({
      CheckCacheNodes(request.nodes()),
      CheckCacheDatasetName("the dataset NAME", request.name()),
      CheckCacheWait(request.wait_seconds()),
      ValidateClaimedUser(request.user()),
  });
}

}  // namespace gantry
