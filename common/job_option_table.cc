// Every sbatch option and what it does to a JobRequest: the bounds on
// counts, one handler per kind of value, and the table that names them
// (job_option_table.h). Apart from job_options.cc, which reads option
// words and script directives against this table, so that adding an
// option touches only this file.
#include "common/job_option_table.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "common/begin_time.h"
#include "common/dataset_spec.h"
#include "common/export_environment.h"
#include "common/hostlist.h"
#include "common/ignored_options.h"
#include "common/job_array.h"
#include "common/job_dependency.h"
#include "common/node_constraint.h"
#include "common/option_values.h"
#include "common/request_limits.h"
#include "common/signal_name.h"
#include "common/split_view.h"
#include "common/text.h"

namespace gantry::job_options_internal {
namespace {

// --- The option table. ---
absl::Status InvalidValue(const OptionUse& use, std::string_view reason) {
  return absl::InvalidArgumentError(
      Concat(use.source, ": invalid value ",
             QuoteForMessage(*use.value, kMaxQuotedOptionChars), " for --",
             use.spec.long_name, ": ", reason));
}

absl::Status CheckText(const OptionUse& use) {
  for (char c : *use.value) {
    if (absl::ascii_iscntrl(static_cast<unsigned char>(c))) {
      return InvalidValue(use, "must not contain control characters");
    }
  }
  return absl::OkStatus();
}

template <std::string JobRequest::*kField>
absl::Status SetText(const OptionUse& use, JobRequest& request) {
  if (absl::Status status = CheckText(use); !status.ok()) return status;
  request.*kField = std::string(*use.value);
  return absl::OkStatus();
}

template <std::optional<uint32_t> JobRequest::*kField, uint32_t kMax>
absl::Status SetCount(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<uint32_t> count = ParseCount(*use.value, kMax);
  if (!count.ok()) return InvalidValue(use, StatusMessage(count.status()));
  request.*kField = *count;
  return absl::OkStatus();
}

// Slurm's "--nodes=min-max" lets the scheduler start the job on any count in
// between: nodes holds MAX, min_nodes MIN (unset for a single count). A
// later -N replaces an earlier one, range or not.
absl::Status SetNodes(const OptionUse& use, JobRequest& request) {
  const std::string_view value = *use.value;
  const std::size_t dash = value.find('-');
  if (dash == 0 || dash == std::string_view::npos) {
    absl::Status status =
        SetCount<&JobRequest::nodes, limits::kMaxNodes>(use, request);
    if (status.ok()) request.min_nodes.reset();
    return status;
  }
  absl::StatusOr<uint32_t> min =
      ParseCount(value.substr(0, dash), limits::kMaxNodes);
  absl::StatusOr<uint32_t> max =
      ParseCount(value.substr(dash + 1), limits::kMaxNodes);
  for (const absl::StatusOr<uint32_t>* bound : {&min, &max}) {
    if (bound->ok()) continue;
    if (StatusMessage(bound->status()).starts_with("must be at most")) {
      return InvalidValue(use, StatusMessage(bound->status()));
    }
    return InvalidValue(
        use, "must be a positive integer or a min-max range such as 2-4");
  }
  if (*max < *min) return InvalidValue(use, "range maximum is below minimum");
  // As Slurm: as many nodes as are free up to MAX, at least MIN (and
  // Gantry keeps the job running on fewer after a loss, down to MIN).
  request.nodes = *max;
  if (*max != *min) request.min_nodes = *min;
  return absl::OkStatus();
}

bool IsGpuType(std::string_view type) {
  return !type.empty() && std::all_of(type.begin(), type.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '-' || c == '.';
  });
}

// Sets the GPU count from an optional type and an optional count (absent:
// one GPU, as in Slurm's "--gres=gpu"). A type ("a100") asks for nodes
// whose GPUs are of that model (see PendingJob::gpu_type).
absl::Status SetGpus(const OptionUse& use, std::optional<std::string_view> type,
                     std::optional<std::string_view> count_text,
                     JobRequest& request,
                     uint32_t max = limits::kMaxGpusPerNode) {
  uint32_t count = 1;
  if (count_text.has_value()) {
    absl::StatusOr<uint32_t> parsed = ParseCount(*count_text, max);
    if (!parsed.ok()) {
      return InvalidValue(use,
                          Concat("GPU count ", StatusMessage(parsed.status())));
    }
    count = *parsed;
  }
  if (type.has_value()) {
    if (!IsGpuType(*type)) {
      return InvalidValue(
          use,
          Concat("GPU type ", QuoteForMessage(*type, kMaxQuotedOptionChars),
                 " is not a valid name"));
    }
    request.gpu_type = std::string(*type);
  }
  request.gpus_per_node = count;
  return absl::OkStatus();
}

// [type:]N, the count at most `max`.
absl::Status SetTypedGpus(const OptionUse& use, JobRequest& request,
                          uint32_t max) {
  const std::string_view value = *use.value;
  const std::size_t colon = value.find(':');
  if (colon == std::string_view::npos) {
    return SetGpus(use, std::nullopt, value, request, max);
  }
  return SetGpus(use, value.substr(0, colon), value.substr(colon + 1), request,
                 max);
}

// --gpus-per-node=[type:]N
absl::Status SetGpusPerNode(const OptionUse& use, JobRequest& request) {
  return SetTypedGpus(use, request, limits::kMaxGpusPerNode);
}

// --gres=gpu[:type][:N]; only GPUs exist here, and naming any other
// resource is an error rather than a silent drop: the job might need it.
absl::Status SetGres(const OptionUse& use, JobRequest& request) {
  bool seen_gpu = false;
  for (std::string_view entry : SplitView(*use.value, ',')) {
    const std::vector<std::string_view> fields = SplitView(entry, ':');
    if (fields[0] != "gpu") {
      if (fields[0].empty()) return InvalidValue(use, "empty resource name");
      return InvalidValue(
          use, Concat("unsupported generic resource ",
                      QuoteForMessage(fields[0], kMaxQuotedOptionChars),
                      ": only gpu is supported"));
    }
    if (seen_gpu) return InvalidValue(use, "gpu is listed more than once");
    seen_gpu = true;
    absl::Status status;
    if (fields.size() == 1) {
      status = SetGpus(use, std::nullopt, std::nullopt, request);
    } else if (fields.size() == 2 && IsDigits(fields[1])) {
      status = SetGpus(use, std::nullopt, fields[1], request);
    } else if (fields.size() == 2) {
      status = SetGpus(use, fields[1], std::nullopt, request);
    } else if (fields.size() == 3) {
      status = SetGpus(use, fields[1], fields[2], request);
    } else {
      return InvalidValue(use, "expected gpu, gpu:N, gpu:type or gpu:type:N");
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status SetMemory(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<uint64_t> mb = MemoryMb(*use.value);
  if (!mb.ok()) return InvalidValue(use, StatusMessage(mb.status()));
  if (*mb > kMaxMemoryPerNodeMb)
    return InvalidValue(use, "more than 1 PiB per node");
  request.mem_per_node_mb = *mb;
  return absl::OkStatus();
}

absl::Status SetTime(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<uint64_t> seconds = TimeLimitSeconds(*use.value);
  if (!seconds.ok()) return InvalidValue(use, StatusMessage(seconds.status()));
  request.time_limit_seconds = *seconds;
  return absl::OkStatus();
}

absl::Status SetMaxRestarts(const OptionUse& use, JobRequest& request) {
  constexpr uint32_t kMaxRestarts = 1000;
  uint32_t count = 0;
  const std::string text(*use.value);
  if (!IsDigits(text) || !absl::SimpleAtoi(text, &count)) {
    return InvalidValue(use, "must be a whole number (0 means no restarts)");
  }
  if (count > kMaxRestarts) {
    return InvalidValue(use, Concat("must be at most ", kMaxRestarts));
  }
  request.max_restarts = count;
  return absl::OkStatus();
}

// Same formats as --time; 0 turns hang detection off.
absl::Status SetHangTimeout(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<uint64_t> seconds = TimeLimitSeconds(*use.value);
  if (!seconds.ok()) return InvalidValue(use, StatusMessage(seconds.status()));
  request.hang_timeout_seconds = *seconds;
  return absl::OkStatus();
}

// --exclusive alone means whole nodes; Slurm's --exclusive=user|mcs|topo
// share a node with some other jobs, which Gantry cannot express, so they
// ask for whole nodes too and say so.
// --preflight alone, or =yes: check; =no: skip it, whatever the cluster's
// policy.
absl::Status SetPreflight(const OptionUse& use, JobRequest& request) {
  if (!use.value.has_value() || *use.value == "yes") {
    request.preflight = true;
  } else if (*use.value == "no") {
    request.preflight = false;
  } else {
    return InvalidValue(use, "expected yes or no");
  }
  return absl::OkStatus();
}

absl::Status SetExclusive(const OptionUse& use, JobRequest& request) {
  if (use.value.has_value()) {
    if (*use.value != "user" && *use.value != "mcs" && *use.value != "topo") {
      return InvalidValue(use, "expected user, mcs or topo");
    }
    request.warnings.push_back(Concat(
        use.source,
        ": --exclusive=", EscapeForMessage(*use.value, kMaxQuotedOptionChars),
        " is treated as --exclusive (whole nodes)"));
  }
  request.exclusive = true;
  return absl::OkStatus();
}

// --switches=N[@maxwait]: at most N leaf switches, waiting at most maxwait
// (a --time value) for such a placement before taking any.
absl::Status SetSwitches(const OptionUse& use, JobRequest& request) {
  const std::string text(*use.value);
  const std::size_t at = text.find('@');
  const std::string count_text = text.substr(0, at);
  uint32_t count = 0;
  if (!IsDigits(count_text) || !absl::SimpleAtoi(count_text, &count) ||
      count == 0 || count > 100000) {
    return InvalidValue(use, "expected N[@maxwait] with N a whole number >= 1");
  }
  std::optional<uint64_t> max_wait;
  if (at != std::string::npos) {
    absl::StatusOr<uint64_t> seconds = TimeLimitSeconds(text.substr(at + 1));
    if (!seconds.ok()) {
      return InvalidValue(use,
                          Concat("maxwait: ", StatusMessage(seconds.status())));
    }
    max_wait = *seconds;
  }
  request.max_switches = count;
  request.switches_max_wait_seconds = max_wait;
  return absl::OkStatus();
}

// --dataset-locality=topology|cache: what placement puts first for a job
// with datasets (daemon/scheduler/cache_preference.h).
absl::Status SetDatasetLocality(const OptionUse& use, JobRequest& request) {
  if (*use.value != "topology" && *use.value != "cache") {
    return InvalidValue(use, "expected topology or cache");
  }
  request.dataset_locality_cache = *use.value == "cache";
  return absl::OkStatus();
}

absl::Status SetDependency(const OptionUse& use, JobRequest& request) {
  const std::string text(*use.value);
  absl::StatusOr<JobDependency> parsed = ParseDependency(text);
  if (!parsed.ok()) return InvalidValue(use, StatusMessage(parsed.status()));
  request.dependency = text;
  return absl::OkStatus();
}

absl::Status SetArray(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<JobArraySpec> parsed = ParseJobArray(*use.value);
  if (!parsed.ok()) return InvalidValue(use, StatusMessage(parsed.status()));
  request.array = FormatJobArray(*parsed);
  return absl::OkStatus();
}

absl::Status SetParsable(const OptionUse&, JobRequest& request) {
  request.parsable = true;
  return absl::OkStatus();
}

absl::Status SetPerTask(const OptionUse&, JobRequest& request) {
  request.per_task = true;
  return absl::OkStatus();
}

template <bool JobRequest::*kField>
absl::Status SetFlag(const OptionUse&, JobRequest& request) {
  request.*kField = true;
  return absl::OkStatus();
}

// sbatch takes --wrap on its command line only: in a script it would name
// a different script.
// OK unless `use` comes from a #SBATCH directive: `option` means something
// only to the command that submits (sbatch), not to the script.
absl::Status CommandLineOnly(const OptionUse& use, std::string_view option) {
  if (!use.source.empty() && use.source.front() == '#') {  // a directive
    return absl::InvalidArgumentError(
        Concat(use.source, ": ", option,
               " belongs on the command line, not in a batch script"));
  }
  return absl::OkStatus();
}

absl::Status SetWrap(const OptionUse& use, JobRequest& request) {
  if (absl::Status status = CommandLineOnly(use, "--wrap"); !status.ok()) {
    return status;
  }
  if (use.value->find_first_not_of(" \t\n") == std::string_view::npos) {
    return absl::InvalidArgumentError("--wrap needs a command");
  }
  request.wrap = std::string(*use.value);
  return absl::OkStatus();
}

absl::Status SetVersion(const OptionUse& use, JobRequest& request) {
  if (absl::Status status = CommandLineOnly(use, "--version"); !status.ok()) {
    return status;
  }
  request.version = true;
  return absl::OkStatus();
}

// --begin and --deadline (the same time forms, as Slurm's).
template <std::string JobRequest::*kField>
absl::Status SetClockTime(const OptionUse& use, JobRequest& request) {
  // The syntax does not depend on the clock: check it now, resolve it at
  // submission.
  absl::StatusOr<int64_t> at = ParseBeginTime(*use.value, 0);
  if (!at.ok()) return InvalidValue(use, StatusMessage(at.status()));
  request.*kField = std::string(*use.value);
  return absl::OkStatus();
}

absl::Status SetExport(const OptionUse& use, JobRequest& request) {
  absl::Status valid = CheckExportSpec(*use.value);
  if (!valid.ok()) return InvalidValue(use, StatusMessage(valid));
  request.export_spec = std::string(*use.value);
  return absl::OkStatus();
}

// --gpus=[type:]N and --gpus-per-task=[type:]N: the same grammar as
// --gpus-per-node, counted for the job (up to limits::kMaxGpusPerJob) or for
// each task.
template <std::optional<uint32_t> JobRequest::*kField, uint32_t kMax>
absl::Status SetGpuCount(const OptionUse& use, JobRequest& request) {
  const std::optional<uint32_t> per_node = request.gpus_per_node;
  absl::Status status = SetTypedGpus(use, request, kMax);
  if (!status.ok()) return status;
  request.*kField = request.gpus_per_node;
  request.gpus_per_node = per_node;
  return absl::OkStatus();
}

template <std::optional<uint64_t> JobRequest::*kField>
absl::Status SetMemoryPer(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<uint64_t> mb = MemoryMb(*use.value);
  if (!mb.ok()) return InvalidValue(use, StatusMessage(mb.status()));
  if (*mb == 0 || *mb > kMaxMemoryPerNodeMb) {
    return InvalidValue(use, "must be more than 0 and at most 1 PiB");
  }
  request.*kField = *mb;
  return absl::OkStatus();
}

// -w/--nodelist and -x/--exclude: a hostlist expression. (Slurm also
// reads a file when the value holds a '/'; here that is refused rather than
// taken for a host name.)
template <std::vector<std::string> JobRequest::*kField>
absl::Status SetHostlist(const OptionUse& use, JobRequest& request) {
  if (use.value->find('/') != std::string_view::npos) {
    return InvalidValue(use,
                        "give a hostlist such as node[01-04]; reading the "
                        "list from a file is not supported");
  }
  absl::StatusOr<std::vector<std::string>> names =
      ExpandHostlist(*use.value, limits::kMaxNodes);
  if (!names.ok()) return InvalidValue(use, StatusMessage(names.status()));
  std::vector<std::string>& list = request.*kField;
  for (std::string& name : *names) {
    if (std::find(list.begin(), list.end(), name) == list.end()) {
      list.push_back(std::move(name));
    }
  }
  return absl::OkStatus();
}

// --dataset=NAME:PATH (several allowed). The path is checked for
// absoluteness where it is made absolute (the submitting command knows the
// working directory) and again by gantryd.
absl::Status SetDataset(const OptionUse& use, JobRequest& request) {
  if (absl::Status status = CheckText(use); !status.ok()) return status;
  absl::StatusOr<DatasetDeclaration> parsed = ParseDatasetOption(*use.value);
  if (!parsed.ok()) return InvalidValue(use, StatusMessage(parsed.status()));
  std::vector<DatasetDeclaration>& list = request.datasets;
  auto same = std::find_if(list.begin(), list.end(),
                           [&](const DatasetDeclaration& dataset) {
                             return dataset.name == parsed->name;
                           });
  if (same != list.end()) {
    same->path = std::move(parsed->path);
  } else if (list.size() >= kMaxDatasetsPerJob) {
    return InvalidValue(
        use, Concat("more than ", kMaxDatasetsPerJob, " datasets in one job"));
  } else {
    list.push_back(*std::move(parsed));
  }
  return absl::OkStatus();
}

absl::Status SetConstraint(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<NodeConstraint> parsed = NodeConstraint::Parse(*use.value);
  if (!parsed.ok()) return InvalidValue(use, StatusMessage(parsed.status()));
  request.constraint = parsed->text();
  return absl::OkStatus();
}

// --signal=[{R|B}:]SIG[@TIME]: TIME seconds (default 60, at most 65535 as
// in Slurm) before the time limit. R: (also at a reservation's end) has no
// reservations to apply to here and is accepted as plain.
absl::Status SetSignal(const OptionUse& use, JobRequest& request) {
  std::string_view value = *use.value;
  bool batch_only = false;
  if (value.size() > 2 && value[1] == ':') {
    const char scope = static_cast<char>(absl::ascii_toupper(value[0]));
    if (scope != 'B' && scope != 'R') {
      return InvalidValue(use, "the prefix is B: (batch script only) or R:");
    }
    batch_only = scope == 'B';
    value.remove_prefix(2);
  }
  uint32_t seconds = 60;
  const std::size_t at = value.find('@');
  if (at != std::string_view::npos) {
    absl::StatusOr<uint32_t> parsed = ParseCount(value.substr(at + 1), 65535);
    if (!parsed.ok()) {
      return InvalidValue(
          use, Concat("the time after @ ", StatusMessage(parsed.status()),
                      " (seconds before the time limit)"));
    }
    seconds = *parsed;
    value = value.substr(0, at);
  }
  absl::StatusOr<int> signal = ParseSignal(value);
  if (!signal.ok()) return InvalidValue(use, StatusMessage(signal.status()));
  request.warning_signal = *signal;
  request.warning_signal_seconds = seconds;
  request.warning_signal_batch_only = batch_only;
  return absl::OkStatus();
}

absl::Status SetOpenMode(const OptionUse& use, JobRequest& request) {
  const std::string mode = absl::AsciiStrToLower(AsAbsl(*use.value));
  if (mode == "append" || mode == "a") {
    request.append_output = true;
  } else if (mode == "truncate" || mode == "t") {
    request.append_output = false;
  } else {
    return InvalidValue(use, "must be append or truncate");
  }
  return absl::OkStatus();
}

// Accepted so that existing Slurm scripts run, but with no effect yet; the
// warning keeps that from being a surprise.
absl::Status WarnIgnored(const OptionUse& use, JobRequest& request) {
  std::string spelled = Concat("--", use.spec.long_name);
  if (use.value.has_value())
    spelled += Concat("=", EscapeForMessage(*use.value, kMaxQuotedOptionChars));
  request.warnings.push_back(Concat(use.source, ": ", spelled,
                                    " is not supported yet and is ignored"));
  return absl::OkStatus();
}

// Accepted because it already holds here: a gang starts on all its nodes
// at once (--wait-all-nodes), a job on a failed node is requeued
// (--requeue).
absl::Status Accept(const OptionUse&, JobRequest&) { return absl::OkStatus(); }

absl::Status IgnoreSaying(const OptionUse& use, JobRequest& request) {
  request.warnings.push_back(
      Concat(use.source, ": --", use.spec.long_name,
             " is ignored: ", WhyIgnored(use.spec.long_name)));
  return absl::OkStatus();
}

absl::Status RefuseSaying(const OptionUse& use, JobRequest&) {
  return absl::InvalidArgumentError(Concat(use.source, ": --",
                                           use.spec.long_name, ": ",
                                           WhyRefused(use.spec.long_name)));
}

absl::Status RejectUid(const OptionUse& use, JobRequest&) {
  return absl::InvalidArgumentError(
      Concat(use.source, ": --", use.spec.long_name,
             " is not supported: jobs always run as the submitting user"));
}

// Every option, in one place: a directive and a flag share this table. To
// add one, add a row (and a JobRequest field and a handler if it does
// something).
constexpr OptionSpec kOptions[] = {
    {"job-name", 'J', Arg::kRequired, &SetText<&JobRequest::job_name>},
    {"nodes", 'N', Arg::kRequired, &SetNodes},
    {"ntasks", 'n', Arg::kRequired,
     &SetCount<&JobRequest::ntasks, limits::kMaxTasks>},
    {"ntasks-per-node", '\0', Arg::kRequired,
     &SetCount<&JobRequest::ntasks_per_node, limits::kMaxTasksPerNode>},
    {"ntasks-per-gpu", '\0', Arg::kRequired,
     &SetCount<&JobRequest::ntasks_per_gpu, limits::kMaxTasksPerNode>},
    {"cpus-per-task", 'c', Arg::kRequired,
     &SetCount<&JobRequest::cpus_per_task, limits::kMaxCpusPerTask>},
    {"gpus-per-node", '\0', Arg::kRequired, &SetGpusPerNode},
    {"gres", '\0', Arg::kRequired, &SetGres},
    {"mem", '\0', Arg::kRequired, &SetMemory},
    {"time", 't', Arg::kRequired, &SetTime},
    {"partition", 'p', Arg::kRequired, &SetText<&JobRequest::partition>},
    {"output", 'o', Arg::kRequired, &SetText<&JobRequest::output>},
    {"error", 'e', Arg::kRequired, &SetText<&JobRequest::error>},
    {"chdir", 'D', Arg::kRequired, &SetText<&JobRequest::chdir>},
    {"parsable", '\0', Arg::kNone, &SetParsable},
    {"per-task", '\0', Arg::kNone, &SetPerTask},
    {"checkpoint-dir", '\0', Arg::kRequired,
     &SetText<&JobRequest::checkpoint_dir>},
    {"max-restarts", '\0', Arg::kRequired, &SetMaxRestarts},
    {"hang-timeout", '\0', Arg::kRequired, &SetHangTimeout},
    {"preflight", '\0', Arg::kOptional, &SetPreflight},
    {"mail-type", '\0', Arg::kRequired, &WarnIgnored},
    {"mail-user", '\0', Arg::kRequired, &WarnIgnored},
    // Names the job carries (squeue, sacct, SLURM_JOB_ACCOUNT); no account
    // or QOS limits are enforced, as in a Slurm without
    // AccountingStorageEnforce.
    {"account", 'A', Arg::kRequired, &SetText<&JobRequest::account>},
    {"qos", 'q', Arg::kRequired, &SetText<&JobRequest::qos>},
    {"comment", '\0', Arg::kRequired, &WarnIgnored},
    {"export", '\0', Arg::kRequired, &SetExport},
    {"export-file", '\0', Arg::kRequired, &SetText<&JobRequest::export_file>},
    {"open-mode", '\0', Arg::kRequired, &SetOpenMode},
    // Requeueing after a node fault is the default; after the job's own
    // failure only with --max-restarts N.
    {"requeue", '\0', Arg::kNone, &Accept},
    {"no-requeue", '\0', Arg::kNone, &SetFlag<&JobRequest::no_requeue>},
    {"begin", 'b', Arg::kRequired, &SetClockTime<&JobRequest::begin>},
    {"deadline", '\0', Arg::kRequired, &SetClockTime<&JobRequest::deadline>},
    {"test-only", '\0', Arg::kNone, &SetFlag<&JobRequest::test_only>},
    {"wait", 'W', Arg::kNone, &SetFlag<&JobRequest::wait>},
    {"hold", 'H', Arg::kNone, &SetFlag<&JobRequest::hold>},
    {"elastic", '\0', Arg::kNone, &SetFlag<&JobRequest::elastic>},
    {"memory-checkpoints", '\0', Arg::kNone,
     &SetFlag<&JobRequest::memory_checkpoints>},
    {"version", 'V', Arg::kNone, &SetVersion},
    {"wrap", '\0', Arg::kRequired, &SetWrap},
    {"gpus", 'G', Arg::kRequired,
     &SetGpuCount<&JobRequest::gpus, limits::kMaxGpusPerJob>},
    {"gpus-per-task", '\0', Arg::kRequired,
     &SetGpuCount<&JobRequest::gpus_per_task, limits::kMaxGpusPerNode>},
    {"mem-per-cpu", '\0', Arg::kRequired,
     &SetMemoryPer<&JobRequest::mem_per_cpu_mb>},
    {"mem-per-gpu", '\0', Arg::kRequired,
     &SetMemoryPer<&JobRequest::mem_per_gpu_mb>},
    {"time-min", '\0', Arg::kRequired, &WarnIgnored},
    {"overcommit", 'O', Arg::kNone, &WarnIgnored},
    {"ntasks-per-core", '\0', Arg::kRequired, &WarnIgnored},
    {"reservation", '\0', Arg::kRequired, &WarnIgnored},
    {"wait-all-nodes", '\0', Arg::kRequired, &Accept},
    {"hint", '\0', Arg::kRequired, &WarnIgnored},
    {"signal", '\0', Arg::kRequired, &SetSignal},
    {"dataset", '\0', Arg::kRequired, &SetDataset},
    {"constraint", 'C', Arg::kRequired, &SetConstraint},
    {"nodelist", 'w', Arg::kRequired, &SetHostlist<&JobRequest::nodelist>},
    {"exclude", 'x', Arg::kRequired, &SetHostlist<&JobRequest::exclude>},
    {"exclusive", '\0', Arg::kOptional, &SetExclusive},
    {"switches", '\0', Arg::kRequired, &SetSwitches},
    {"dataset-locality", '\0', Arg::kRequired, &SetDatasetLocality},
    {"dependency", 'd', Arg::kRequired, &SetDependency},
    {"array", 'a', Arg::kRequired, &SetArray},
    {"nice", '\0', Arg::kOptional, &WarnIgnored},
    {"propagate", '\0', Arg::kOptional, &WarnIgnored},
    {"get-user-env", '\0', Arg::kOptional, &WarnIgnored},
    {"uid", '\0', Arg::kRequired, &RejectUid},
    {"quiet", 'Q', Arg::kNone, &SetFlag<&JobRequest::quiet>},
    // The rest of sbatch's options (Slurm 22.05), accepted with a warning
    // or refused, each saying why (kIgnoredBecause, kRefusedBecause).
    {"acctg-freq", '\0', Arg::kRequired, &IgnoreSaying},
    {"batch", '\0', Arg::kRequired, &IgnoreSaying},
    {"cluster-constraint", '\0', Arg::kRequired, &IgnoreSaying},
    {"clusters", 'M', Arg::kRequired, &IgnoreSaying},
    {"contiguous", '\0', Arg::kNone, &IgnoreSaying},
    {"core-spec", 'S', Arg::kRequired, &IgnoreSaying},
    {"cores-per-socket", '\0', Arg::kRequired, &IgnoreSaying},
    {"cpu-freq", '\0', Arg::kRequired, &IgnoreSaying},
    {"cpus-per-gpu", '\0', Arg::kRequired, &IgnoreSaying},
    {"delay-boot", '\0', Arg::kRequired, &IgnoreSaying},
    {"distribution", 'm', Arg::kRequired, &IgnoreSaying},
    {"extra-node-info", 'B', Arg::kRequired, &IgnoreSaying},
    {"gpu-bind", '\0', Arg::kRequired, &IgnoreSaying},
    {"gpu-freq", '\0', Arg::kRequired, &IgnoreSaying},
    {"gpus-per-socket", '\0', Arg::kRequired, &IgnoreSaying},
    {"gres-flags", '\0', Arg::kRequired, &IgnoreSaying},
    {"ignore-pbs", '\0', Arg::kNone, &IgnoreSaying},
    {"input", 'i', Arg::kRequired, &IgnoreSaying},
    {"kill-on-invalid-dep", '\0', Arg::kRequired, &IgnoreSaying},
    {"licenses", 'L', Arg::kRequired, &IgnoreSaying},
    {"mcs-label", '\0', Arg::kRequired, &IgnoreSaying},
    {"mem-bind", '\0', Arg::kRequired, &IgnoreSaying},
    {"mincpus", '\0', Arg::kRequired, &IgnoreSaying},
    {"network", '\0', Arg::kRequired, &IgnoreSaying},
    {"no-kill", 'k', Arg::kOptional, &IgnoreSaying},
    {"ntasks-per-socket", '\0', Arg::kRequired, &IgnoreSaying},
    {"oversubscribe", 's', Arg::kNone, &IgnoreSaying},
    {"power", '\0', Arg::kRequired, &IgnoreSaying},
    {"prefer", '\0', Arg::kRequired, &IgnoreSaying},
    {"priority", '\0', Arg::kRequired, &IgnoreSaying},
    {"profile", '\0', Arg::kRequired, &IgnoreSaying},
    {"reboot", '\0', Arg::kNone, &IgnoreSaying},
    {"sockets-per-node", '\0', Arg::kRequired, &IgnoreSaying},
    {"spread-job", '\0', Arg::kNone, &IgnoreSaying},
    {"thread-spec", '\0', Arg::kRequired, &IgnoreSaying},
    {"threads-per-core", '\0', Arg::kRequired, &IgnoreSaying},
    {"tmp", '\0', Arg::kRequired, &IgnoreSaying},
    {"use-min-nodes", '\0', Arg::kNone, &IgnoreSaying},
    {"verbose", 'v', Arg::kOptional, &IgnoreSaying},
    {"wckey", '\0', Arg::kRequired, &IgnoreSaying},
    {"bb", '\0', Arg::kRequired, &RefuseSaying},
    {"bbf", '\0', Arg::kRequired, &RefuseSaying},
    {"container", '\0', Arg::kRequired, &RefuseSaying},
    {"gid", '\0', Arg::kRequired, &RefuseSaying},
    {"nodefile", 'F', Arg::kRequired, &RefuseSaying},
};
}  // namespace

std::span<const OptionSpec> AllOptions() { return kOptions; }

const OptionSpec* FindLong(std::string_view name) {
  for (const OptionSpec& spec : kOptions) {
    if (spec.long_name == name) return &spec;
  }
  return nullptr;
}

const OptionSpec* FindShort(char name) {
  for (const OptionSpec& spec : kOptions) {
    if (spec.short_name != '\0' && spec.short_name == name) return &spec;
  }
  return nullptr;
}
}  // namespace gantry::job_options_internal
