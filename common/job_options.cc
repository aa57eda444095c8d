#include "common/job_options.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "common/begin_time.h"
#include "common/edit_distance.h"
#include "common/export_environment.h"
#include "common/hostlist.h"
#include "common/job_array.h"
#include "common/job_dependency.h"
#include "common/node_constraint.h"
#include "common/signal_name.h"
#include "common/split_view.h"

namespace gantry {
namespace {

// Upper bounds on counts. Anything above is a typo (an extra zero, a pasted
// number), and rejecting it here gives a clearer message than "no cluster
// can ever run this" from the scheduler. The spec fixes most of them; the
// ntasks-per-node bound is our choice (no node runs more tasks than that).
constexpr uint32_t kMaxNodes = 100'000;
constexpr uint32_t kMaxNtasks = 10'000'000;
constexpr uint32_t kMaxNtasksPerNode = 1'000'000;
constexpr uint32_t kMaxCpusPerTask = 4096;
constexpr uint32_t kMaxGpusPerNode = 64;
constexpr uint64_t kMaxTimeLimitSeconds = 365ull * 24 * 3600;
// 1 PiB per node; also keeps MiB * 1024 arithmetic far from overflow.
constexpr uint64_t kMaxMemoryMb = 1ull << 30;

// Values are quoted in messages; a pathological one must not produce a
// megabyte-long, multi-line message.
constexpr std::size_t kMaxQuotedChars = 80;

// Debian's abseil has its own absl::string_view, which neither converts from
// nor to std::string_view, so absl's string helpers are not used on
// std::string_view here. Cat is absl::StrCat for the types this file uses.
template <typename T>
void AppendPart(std::string& out, const T& part) {
  if constexpr (std::is_same_v<T, char>) {
    out.push_back(part);
  } else if constexpr (std::is_integral_v<T>) {
    out += std::to_string(part);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out.append(std::string_view(part));
  } else {
    out.append(part.data(), part.size());  // absl::string_view
  }
}

template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (AppendPart(out, parts), ...);
  return out;
}

std::string_view Message(const absl::Status& status) {
  return std::string_view(status.message().data(), status.message().size());
}

std::string_view TrimLeft(std::string_view text) {
  while (!text.empty() &&
         absl::ascii_isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  return text;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return absl::ascii_tolower(static_cast<unsigned char>(x)) ==
                  absl::ascii_tolower(static_cast<unsigned char>(y));
         });
}

std::string Quote(std::string_view text) {
  if (text.size() > kMaxQuotedChars) {
    return Cat(
        "\"", absl::CHexEscape(absl::string_view(text.data(), kMaxQuotedChars)),
        "...\"");
  }
  return Cat("\"",
             absl::CHexEscape(absl::string_view(text.data(), text.size())),
             "\"");
}

// Like Quote but for option names, which are printed bare.
std::string Bare(std::string_view text) {
  std::string quoted = Quote(text);
  return quoted.substr(1, quoted.size() - 2);
}

bool IsDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// Parses up to `max_digits` decimal digits (no sign, no spaces); nullopt for
// anything else. max_digits <= 19 keeps the result within uint64_t.
std::optional<uint64_t> ParseDigits(std::string_view text,
                                    std::size_t max_digits) {
  if (!IsDigits(text)) return std::nullopt;
  // Leading zeros do not make a number larger.
  while (text.size() > 1 && text[0] == '0') text.remove_prefix(1);
  if (text.size() > max_digits) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) value = value * 10 + static_cast<uint64_t>(c - '0');
  return value;
}

// Returns the reason a count is not acceptable, or the count.
absl::StatusOr<uint32_t> ParseCount(std::string_view text, uint32_t max) {
  if (!IsDigits(text)) {
    return absl::InvalidArgumentError("must be a positive integer");
  }
  const std::optional<uint64_t> value = ParseDigits(text, 19);
  if (value.has_value() && *value == 0) {
    return absl::InvalidArgumentError("must be a positive integer");
  }
  if (!value.has_value() || *value > max) {
    return absl::InvalidArgumentError(Cat("must be at most ", max));
  }
  return static_cast<uint32_t>(*value);
}

// --- Time and memory, returning bare reasons (callers add the context). ---

constexpr char kTimeFormats[] =
    "expected minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
    "days-hours:minutes, days-hours:minutes:seconds or UNLIMITED";

constexpr char kTooLong[] = "longer than 365 days";

absl::StatusOr<uint64_t> TimeLimitSeconds(std::string_view text) {
  // Slurm's spellings of "no limit"; "-1" is what `scontrol show` prints.
  if (EqualsIgnoreCase(text, "UNLIMITED") ||
      EqualsIgnoreCase(text, "INFINITE") || text == "-1") {
    return 0;
  }
  std::optional<uint64_t> days;
  std::string_view clock = text;
  if (const std::size_t dash = text.find('-'); dash != std::string_view::npos) {
    const std::string_view days_text = text.substr(0, dash);
    days = ParseDigits(days_text, 9);
    if (!days.has_value()) {
      return absl::InvalidArgumentError(IsDigits(days_text) ? kTooLong
                                                            : kTimeFormats);
    }
    clock = text.substr(dash + 1);
  }
  const std::vector<std::string_view> fields = SplitView(clock, ':');
  if (fields.size() > 3) return absl::InvalidArgumentError(kTimeFormats);
  std::vector<uint64_t> values;
  for (std::string_view field : fields) {
    // Nine digits: large enough for any real limit, small enough that the
    // arithmetic below cannot overflow before the 365-day check.
    const std::optional<uint64_t> value = ParseDigits(field, 9);
    if (!value.has_value()) {
      // A billion of any unit is past the limit; say so, not "bad format".
      return absl::InvalidArgumentError(IsDigits(field) ? kTooLong
                                                        : kTimeFormats);
    }
    values.push_back(*value);
  }
  // Map the fields onto hours, minutes, seconds. The first field is free
  // ("90" minutes, "48:00:00"); the ones after it are clock positions.
  uint64_t hours = 0, minutes = 0, seconds = 0;
  if (days.has_value()) {
    hours = values[0];
    if (values.size() > 1) minutes = values[1];
    if (values.size() > 2) seconds = values[2];
    if (hours >= 24) {
      return absl::InvalidArgumentError("hours must be below 24 after days");
    }
  } else if (values.size() == 1) {
    minutes = values[0];
  } else if (values.size() == 2) {
    minutes = values[0];
    seconds = values[1];
  } else {
    hours = values[0];
    minutes = values[1];
    seconds = values[2];
  }
  const bool minutes_lead = !days.has_value() && values.size() <= 2;
  if (!minutes_lead && minutes >= 60) {
    return absl::InvalidArgumentError("minutes must be below 60");
  }
  if (values.size() >= 2 && seconds >= 60) {
    return absl::InvalidArgumentError("seconds must be below 60");
  }
  const uint64_t total =
      ((days.value_or(0) * 24 + hours) * 60 + minutes) * 60 + seconds;
  if (total > kMaxTimeLimitSeconds) {
    return absl::InvalidArgumentError(kTooLong);
  }
  return total;
}

absl::StatusOr<uint64_t> MemoryMb(std::string_view text) {
  constexpr char kFormat[] =
      "expected a whole number with an optional K, M, G or T suffix";
  uint64_t shift_up = 0;   // multiply by 1024^shift_up
  bool kilobytes = false;  // divide by 1024, rounding up
  if (!text.empty() &&
      !absl::ascii_isdigit(static_cast<unsigned char>(text.back()))) {
    switch (absl::ascii_toupper(static_cast<unsigned char>(text.back()))) {
      case 'K':
        kilobytes = true;
        break;
      case 'M':
        break;
      case 'G':
        shift_up = 1;
        break;
      case 'T':
        shift_up = 2;
        break;
      default:
        return absl::InvalidArgumentError(kFormat);
    }
    text.remove_suffix(1);
  }
  if (!IsDigits(text)) return absl::InvalidArgumentError(kFormat);
  const std::optional<uint64_t> count = ParseDigits(text, 19);
  // Twenty digits of MiB is absurd; report it as too large, not malformed.
  if (!count.has_value()) return absl::InvalidArgumentError("too large");
  if (kilobytes) return *count / 1024 + (*count % 1024 != 0 ? 1 : 0);
  uint64_t mb = *count;
  for (uint64_t i = 0; i < shift_up; ++i) {
    if (mb > UINT64_MAX / 1024) return absl::InvalidArgumentError("too large");
    mb *= 1024;
  }
  return mb;
}

// --- The option table. ---

enum class Arg {
  kNone,      // a flag: --parsable
  kRequired,  // --nodes=2, --nodes 2, -N 2, -N2
  kOptional,  // only attached: --exclusive or --exclusive=user
};

struct OptionSpec;

// One use of an option, as handlers see it.
struct OptionUse {
  const OptionSpec& spec;
  std::string_view source;  // "#SBATCH line 3", "command line"
  std::optional<std::string_view> value;
};

using Handler = absl::Status (*)(const OptionUse&, JobRequest&);

struct OptionSpec {
  std::string_view long_name;  // without the leading "--"
  char short_name;             // '\0' when there is none
  Arg arg;
  Handler apply;
};

absl::Status InvalidValue(const OptionUse& use, std::string_view reason) {
  return absl::InvalidArgumentError(Cat(use.source, ": invalid value ",
                                        Quote(*use.value), " for --",
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
  if (!count.ok()) return InvalidValue(use, Message(count.status()));
  request.*kField = *count;
  return absl::OkStatus();
}

// Slurm's "--nodes=min-max" lets the scheduler start the job on any count in
// between. Gantry's choice is always the minimum (the size that can start
// soonest; SLURM_NNODES tells the script), and the user is told so.
absl::Status SetNodes(const OptionUse& use, JobRequest& request) {
  const std::string_view value = *use.value;
  const std::size_t dash = value.find('-');
  if (dash == 0 || dash == std::string_view::npos) {
    return SetCount<&JobRequest::nodes, kMaxNodes>(use, request);
  }
  absl::StatusOr<uint32_t> min = ParseCount(value.substr(0, dash), kMaxNodes);
  absl::StatusOr<uint32_t> max = ParseCount(value.substr(dash + 1), kMaxNodes);
  for (const absl::StatusOr<uint32_t>* bound : {&min, &max}) {
    if (bound->ok()) continue;
    if (Message(bound->status()).starts_with("must be at most")) {
      return InvalidValue(use, Message(bound->status()));
    }
    return InvalidValue(
        use, "must be a positive integer or a min-max range such as 2-4");
  }
  if (*max < *min) return InvalidValue(use, "range maximum is below minimum");
  request.nodes = *min;
  if (*max != *min) {
    request.warnings.push_back(
        Cat(use.source, ": --nodes=", value, ": the job gets ", *min,
            " node(s), the minimum of the range (Gantry does not grow a job "
            "toward the maximum)"));
  }
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
                     JobRequest& request) {
  uint32_t count = 1;
  if (count_text.has_value()) {
    absl::StatusOr<uint32_t> parsed = ParseCount(*count_text, kMaxGpusPerNode);
    if (!parsed.ok()) {
      return InvalidValue(use, Cat("GPU count ", Message(parsed.status())));
    }
    count = *parsed;
  }
  if (type.has_value()) {
    if (!IsGpuType(*type)) {
      return InvalidValue(
          use, Cat("GPU type ", Quote(*type), " is not a valid name"));
    }
    request.gpu_type = std::string(*type);
  }
  request.gpus_per_node = count;
  return absl::OkStatus();
}

// --gpus-per-node=[type:]N
absl::Status SetGpusPerNode(const OptionUse& use, JobRequest& request) {
  const std::string_view value = *use.value;
  const std::size_t colon = value.find(':');
  if (colon == std::string_view::npos) {
    return SetGpus(use, std::nullopt, value, request);
  }
  return SetGpus(use, value.substr(0, colon), value.substr(colon + 1), request);
}

// --gres=gpu[:type][:N]; only GPUs exist here, and naming any other
// resource is an error rather than a silent drop: the job might need it.
absl::Status SetGres(const OptionUse& use, JobRequest& request) {
  bool seen_gpu = false;
  for (std::string_view entry : SplitView(*use.value, ',')) {
    const std::vector<std::string_view> fields = SplitView(entry, ':');
    if (fields[0] != "gpu") {
      if (fields[0].empty()) return InvalidValue(use, "empty resource name");
      return InvalidValue(use,
                          Cat("unsupported generic resource ", Quote(fields[0]),
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
  if (!mb.ok()) return InvalidValue(use, Message(mb.status()));
  if (*mb > kMaxMemoryMb) return InvalidValue(use, "more than 1 PiB per node");
  request.mem_per_node_mb = *mb;
  return absl::OkStatus();
}

absl::Status SetTime(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<uint64_t> seconds = TimeLimitSeconds(*use.value);
  if (!seconds.ok()) return InvalidValue(use, Message(seconds.status()));
  request.time_limit_seconds = *seconds;
  return absl::OkStatus();
}

absl::Status SetMaxRestarts(const OptionUse& use, JobRequest& request) {
  constexpr uint32_t kMaxRestarts = 1000;
  uint32_t count = 0;
  const std::string text(*use.value);
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(),
                   [](char c) { return c >= '0' && c <= '9'; }) ||
      !absl::SimpleAtoi(text, &count)) {
    return InvalidValue(use, "must be a whole number (0 means no restarts)");
  }
  if (count > kMaxRestarts) {
    return InvalidValue(use, Cat("must be at most ", kMaxRestarts));
  }
  request.max_restarts = count;
  return absl::OkStatus();
}

// Same formats as --time; 0 turns hang detection off.
absl::Status SetHangTimeout(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<uint64_t> seconds = TimeLimitSeconds(*use.value);
  if (!seconds.ok()) return InvalidValue(use, Message(seconds.status()));
  request.hang_timeout_seconds = *seconds;
  return absl::OkStatus();
}

// --exclusive alone means whole nodes; Slurm's --exclusive=user|mcs|topo
// share a node with some other jobs, which Gantry cannot express, so they
// ask for whole nodes too and say so.
absl::Status SetExclusive(const OptionUse& use, JobRequest& request) {
  if (use.value.has_value()) {
    if (*use.value != "user" && *use.value != "mcs" && *use.value != "topo") {
      return InvalidValue(use, "expected user, mcs or topo");
    }
    request.warnings.push_back(Cat(use.source,
                                   ": --exclusive=", Bare(*use.value),
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
  if (count_text.empty() ||
      !std::all_of(count_text.begin(), count_text.end(),
                   [](char c) { return c >= '0' && c <= '9'; }) ||
      !absl::SimpleAtoi(count_text, &count) || count == 0 || count > 100000) {
    return InvalidValue(use, "expected N[@maxwait] with N a whole number >= 1");
  }
  std::optional<uint64_t> max_wait;
  if (at != std::string::npos) {
    absl::StatusOr<uint64_t> seconds = TimeLimitSeconds(text.substr(at + 1));
    if (!seconds.ok()) {
      return InvalidValue(use, Cat("maxwait: ", Message(seconds.status())));
    }
    max_wait = *seconds;
  }
  request.max_switches = count;
  request.switches_max_wait_seconds = max_wait;
  return absl::OkStatus();
}

absl::Status SetDependency(const OptionUse& use, JobRequest& request) {
  const std::string text(*use.value);
  absl::StatusOr<JobDependency> parsed = ParseDependency(text);
  if (!parsed.ok()) return InvalidValue(use, Message(parsed.status()));
  request.dependency = text;
  return absl::OkStatus();
}

absl::Status SetArray(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<JobArraySpec> parsed = ParseJobArray(*use.value);
  if (!parsed.ok()) return InvalidValue(use, Message(parsed.status()));
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
        Cat(use.source, ": ", option,
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

absl::Status SetBegin(const OptionUse& use, JobRequest& request) {
  // The syntax does not depend on the clock: check it now, resolve it at
  // submission.
  absl::StatusOr<int64_t> at = ParseBeginTime(*use.value, 0);
  if (!at.ok()) return InvalidValue(use, Message(at.status()));
  request.begin = std::string(*use.value);
  return absl::OkStatus();
}

absl::Status SetExport(const OptionUse& use, JobRequest& request) {
  absl::Status valid = CheckExportSpec(*use.value);
  if (!valid.ok()) return InvalidValue(use, Message(valid));
  request.export_spec = std::string(*use.value);
  return absl::OkStatus();
}

// --gpus=[type:]N and --gpus-per-task=[type:]N: the same grammar as
// --gpus-per-node, counted for the job or for each task.
template <std::optional<uint32_t> JobRequest::*kField>
absl::Status SetGpuCount(const OptionUse& use, JobRequest& request) {
  const std::optional<uint32_t> per_node = request.gpus_per_node;
  absl::Status status = SetGpusPerNode(use, request);
  if (!status.ok()) return status;
  request.*kField = request.gpus_per_node;
  request.gpus_per_node = per_node;
  return absl::OkStatus();
}

template <std::optional<uint64_t> JobRequest::*kField>
absl::Status SetMemoryPer(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<uint64_t> mb = MemoryMb(*use.value);
  if (!mb.ok()) return InvalidValue(use, Message(mb.status()));
  if (*mb == 0 || *mb > kMaxMemoryMb) {
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
      ExpandHostlist(*use.value, kMaxNodes);
  if (!names.ok()) return InvalidValue(use, Message(names.status()));
  std::vector<std::string>& list = request.*kField;
  for (std::string& name : *names) {
    if (std::find(list.begin(), list.end(), name) == list.end()) {
      list.push_back(std::move(name));
    }
  }
  return absl::OkStatus();
}

absl::Status SetConstraint(const OptionUse& use, JobRequest& request) {
  absl::StatusOr<NodeConstraint> parsed = NodeConstraint::Parse(*use.value);
  if (!parsed.ok()) return InvalidValue(use, Message(parsed.status()));
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
      return InvalidValue(use,
                          Cat("the time after @ ", Message(parsed.status()),
                              " (seconds before the time limit)"));
    }
    seconds = *parsed;
    value = value.substr(0, at);
  }
  absl::StatusOr<int> signal = ParseSignal(value);
  if (!signal.ok()) return InvalidValue(use, Message(signal.status()));
  request.warning_signal = *signal;
  request.warning_signal_seconds = seconds;
  request.warning_signal_batch_only = batch_only;
  return absl::OkStatus();
}

absl::Status SetOpenMode(const OptionUse& use, JobRequest& request) {
  const std::string mode = absl::AsciiStrToLower(
      absl::string_view(use.value->data(), use.value->size()));
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
  std::string spelled = Cat("--", use.spec.long_name);
  if (use.value.has_value()) spelled += Cat("=", Bare(*use.value));
  request.warnings.push_back(
      Cat(use.source, ": ", spelled, " is not supported yet and is ignored"));
  return absl::OkStatus();
}

// Accepted because it already holds here: a gang starts on all its nodes
// at once (--wait-all-nodes), a failed job is requeued (--requeue).
absl::Status Accept(const OptionUse&, JobRequest&) { return absl::OkStatus(); }

absl::Status RejectUid(const OptionUse& use, JobRequest&) {
  return absl::InvalidArgumentError(
      Cat(use.source, ": --", use.spec.long_name,
          " is not supported: jobs always run as the submitting user"));
}

// Every option, in one place: a directive and a flag share this table. To
// add one, add a row (and a JobRequest field and a handler if it does
// something).
constexpr OptionSpec kOptions[] = {
    {"job-name", 'J', Arg::kRequired, &SetText<&JobRequest::job_name>},
    {"nodes", 'N', Arg::kRequired, &SetNodes},
    {"ntasks", 'n', Arg::kRequired, &SetCount<&JobRequest::ntasks, kMaxNtasks>},
    {"ntasks-per-node", '\0', Arg::kRequired,
     &SetCount<&JobRequest::ntasks_per_node, kMaxNtasksPerNode>},
    {"cpus-per-task", 'c', Arg::kRequired,
     &SetCount<&JobRequest::cpus_per_task, kMaxCpusPerTask>},
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
    {"mail-type", '\0', Arg::kRequired, &WarnIgnored},
    {"mail-user", '\0', Arg::kRequired, &WarnIgnored},
    {"account", 'A', Arg::kRequired, &WarnIgnored},
    {"qos", 'q', Arg::kRequired, &WarnIgnored},
    {"comment", '\0', Arg::kRequired, &WarnIgnored},
    {"export", '\0', Arg::kRequired, &SetExport},
    {"open-mode", '\0', Arg::kRequired, &SetOpenMode},
    // Requeueing after a failure is the default (--max-restarts).
    {"requeue", '\0', Arg::kNone, &Accept},
    {"no-requeue", '\0', Arg::kNone, &SetFlag<&JobRequest::no_requeue>},
    {"begin", 'b', Arg::kRequired, &SetBegin},
    {"test-only", '\0', Arg::kNone, &SetFlag<&JobRequest::test_only>},
    {"wait", 'W', Arg::kNone, &SetFlag<&JobRequest::wait>},
    {"hold", 'H', Arg::kNone, &SetFlag<&JobRequest::hold>},
    {"version", 'V', Arg::kNone, &SetVersion},
    {"wrap", '\0', Arg::kRequired, &SetWrap},
    {"gpus", 'G', Arg::kRequired, &SetGpuCount<&JobRequest::gpus>},
    {"gpus-per-task", '\0', Arg::kRequired,
     &SetGpuCount<&JobRequest::gpus_per_task>},
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
    {"constraint", 'C', Arg::kRequired, &SetConstraint},
    {"nodelist", 'w', Arg::kRequired, &SetHostlist<&JobRequest::nodelist>},
    {"exclude", 'x', Arg::kRequired, &SetHostlist<&JobRequest::exclude>},
    {"exclusive", '\0', Arg::kOptional, &SetExclusive},
    {"switches", '\0', Arg::kRequired, &SetSwitches},
    {"dependency", 'd', Arg::kRequired, &SetDependency},
    {"array", 'a', Arg::kRequired, &SetArray},
    {"nice", '\0', Arg::kOptional, &WarnIgnored},
    {"propagate", '\0', Arg::kOptional, &WarnIgnored},
    {"get-user-env", '\0', Arg::kOptional, &WarnIgnored},
    {"uid", '\0', Arg::kRequired, &RejectUid},
};

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

}  // namespace

bool OptionTakesNextWord(std::string_view word) {
  const OptionSpec* spec = nullptr;
  if (word.size() > 2 && word.substr(0, 2) == "--") {
    if (word.find('=') != std::string_view::npos) return false;
    spec = FindLong(word.substr(2));
  } else if (word.size() == 2 && word[0] == '-') {
    spec = FindShort(word[1]);
  }
  return spec != nullptr && spec->arg == Arg::kRequired;
}

namespace {

absl::Status UnknownLong(std::string_view source, std::string_view name) {
  constexpr std::size_t kMaxDistance = 2;
  const OptionSpec* best = nullptr;
  std::size_t best_distance = kMaxDistance + 1;
  for (const OptionSpec& spec : kOptions) {
    const std::size_t distance =
        EditDistance(name, spec.long_name, kMaxDistance);
    if (distance < best_distance) {
      best = &spec;
      best_distance = distance;
    }
  }
  std::string message = Cat(source, ": unknown option --", Bare(name));
  if (best != nullptr) {
    message += Cat(" (did you mean --", best->long_name, "?)");
  }
  return absl::InvalidArgumentError(message);
}

// One line of the directive block.
struct DirectiveLine {
  int line_number;
  std::string_view keyword;  // "#SBATCH" or "#GANTRY"
  std::vector<std::string> words;
};

// Splits a directive's text into words with shell-like quoting: '...' is
// literal, "..." honours \" \\ \$ \` escapes, a backslash outside quotes
// escapes the next character, and a word starting with '#' starts a comment.
// On an unterminated quote, returns the quote character.
std::optional<char> SplitDirectiveWords(std::string_view text,
                                        std::vector<std::string>& words) {
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else if (c == '\'') {
      const std::size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) return '\'';
      word.append(text.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() &&
            std::string_view("\"\\$`").find(text[j + 1]) !=
                std::string_view::npos) {
          ++j;
        }
        word.push_back(text[j]);
      }
      if (j >= text.size()) return '"';
      in_word = true;
      i = j;
    } else if (c == '\\' && i + 1 < text.size()) {
      word.push_back(text[++i]);
      in_word = true;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return std::nullopt;
}

std::string_view DirectiveKeyword(std::string_view line) {
  for (std::string_view keyword : {"#SBATCH", "#GANTRY"}) {
    if (line.starts_with(keyword) &&
        (line.size() == keyword.size() || line[keyword.size()] == ' ' ||
         line[keyword.size()] == '\t')) {
      return keyword;
    }
  }
  return {};
}

absl::StatusOr<std::vector<DirectiveLine>> ExtractDirectiveLines(
    std::string_view script) {
  std::vector<DirectiveLine> lines;
  int line_number = 0;
  for (std::string_view line : SplitView(script, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_number == 1 && line.starts_with("#!")) continue;
    const std::string_view keyword = DirectiveKeyword(line);
    if (keyword.empty()) {
      // sbatch stops at the first command: directives after it would be
      // read by nobody else, so neither do we.
      const std::string_view stripped = TrimLeft(line);
      if (stripped.empty() || stripped[0] == '#') continue;
      break;
    }
    DirectiveLine directive{line_number, keyword, {}};
    if (std::optional<char> quote =
            SplitDirectiveWords(line.substr(keyword.size()), directive.words)) {
      return absl::InvalidArgumentError(Cat(keyword, " line ", line_number,
                                            ": unterminated ",
                                            std::string(1, *quote), " quote"));
    }
    lines.push_back(std::move(directive));
  }
  return lines;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExtractDirectiveWords(
    std::string_view script) {
  absl::StatusOr<std::vector<DirectiveLine>> lines =
      ExtractDirectiveLines(script);
  if (!lines.ok()) return lines.status();
  std::vector<std::string> words;
  for (DirectiveLine& line : *lines) {
    for (std::string& word : line.words) words.push_back(std::move(word));
  }
  return words;
}

absl::Status ApplyJobOptions(const std::vector<std::string>& words,
                             std::string_view source, JobRequest& request) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    if (word.size() < 2 || word[0] != '-' || word == "--") {
      return absl::InvalidArgumentError(
          Cat(source, ": unexpected argument ", Quote(word),
              " (expected an option such as --nodes=2)"));
    }
    const OptionSpec* spec = nullptr;
    std::optional<std::string_view> value;
    if (word[1] == '-') {
      const std::string_view body = word.substr(2);
      const std::size_t equals = body.find('=');
      const std::string_view name = body.substr(0, equals);
      spec = FindLong(name);
      if (spec == nullptr) return UnknownLong(source, name);
      if (equals != std::string_view::npos) value = body.substr(equals + 1);
      if (spec->arg == Arg::kNone && value.has_value()) {
        return absl::InvalidArgumentError(Cat(source, ": --", spec->long_name,
                                              " takes no value (got ",
                                              Quote(*value), ")"));
      }
    } else {
      // "-nodes=2" would otherwise read as -n "odes=2": say what was meant.
      const std::string_view rest = word.substr(1);
      const std::string_view long_name = rest.substr(0, rest.find('='));
      if (long_name.size() > 1 && FindLong(long_name) != nullptr) {
        return absl::InvalidArgumentError(
            Cat(source, ": unknown option ", Bare(word),
                " (long options take two dashes: --", long_name, ")"));
      }
      spec = FindShort(word[1]);
      if (spec == nullptr) {
        return absl::InvalidArgumentError(
            Cat(source, ": unknown option -", Bare(word.substr(1, 1))));
      }
      // getopt semantics: everything after the letter is the value ("-N2").
      if (word.size() > 2) {
        value = word.substr(2);
        if (spec->arg == Arg::kNone) {
          return absl::InvalidArgumentError(
              Cat(source, ": -", std::string(1, spec->short_name),
                  " takes no value (got ", Quote(*value), ")"));
        }
      }
    }
    if (spec->arg == Arg::kRequired && !value.has_value()) {
      if (i + 1 >= words.size()) {
        return absl::InvalidArgumentError(
            Cat(source, ": missing value for --", spec->long_name));
      }
      value = words[++i];
    }
    if (spec->arg != Arg::kNone && value.has_value() && value->empty()) {
      return absl::InvalidArgumentError(
          Cat(source, ": empty value for --", spec->long_name));
    }
    absl::Status status = spec->apply(OptionUse{*spec, source, value}, request);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status ApplyScriptDirectives(std::string_view script,
                                   JobRequest& request) {
  absl::StatusOr<std::vector<DirectiveLine>> lines =
      ExtractDirectiveLines(script);
  if (!lines.ok()) return lines.status();
  for (const DirectiveLine& line : *lines) {
    // Each line stands alone, as in sbatch: "-J" at the end of one line
    // does not take its value from the next.
    absl::Status status = ApplyJobOptions(
        line.words, Cat(line.keyword, " line ", line.line_number), request);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ParseTimeLimit(std::string_view text) {
  absl::StatusOr<uint64_t> seconds = TimeLimitSeconds(text);
  if (!seconds.ok()) {
    return absl::InvalidArgumentError(Cat("invalid time limit ", Quote(text),
                                          ": ", Message(seconds.status())));
  }
  return seconds;
}

std::string FormatTimeLimit(uint64_t seconds) {
  const uint64_t days = seconds / 86400, hours = seconds / 3600 % 24,
                 minutes = seconds / 60 % 60, secs = seconds % 60;
  if (days > 0) {
    return absl::StrFormat("%d-%02d:%02d:%02d", days, hours, minutes, secs);
  }
  if (hours > 0) return absl::StrFormat("%d:%02d:%02d", hours, minutes, secs);
  return absl::StrFormat("%d:%02d", minutes, secs);
}

absl::StatusOr<uint64_t> ParseMemoryMb(std::string_view text) {
  absl::StatusOr<uint64_t> mb = MemoryMb(text);
  if (!mb.ok()) {
    return absl::InvalidArgumentError(
        Cat("invalid memory size ", Quote(text), ": ", Message(mb.status())));
  }
  return mb;
}

// Beyond the documented sequences, a zero-padding width is accepted as in
// sbatch: "%5j" pads the job id with zeros to 5 digits (so do %5A and
// %5a; widths above 10 act as 10); a width before %x or %u is ignored since
// those are not numbers.
// Unknown sequences (%N, %t, %3t, ...) and a trailing lone '%' are copied
// unchanged.
std::string ExpandFilenamePattern(std::string_view pattern, uint64_t job_id,
                                  std::string_view job_name,
                                  std::string_view user,
                                  std::optional<ArrayTaskIds> array_task) {
  // Slurm's NO_VAL: what %a is for a job that is no array task.
  constexpr uint32_t kNoTask = 4294967294u;
  auto padded = [](uint64_t value, std::size_t width) {
    std::string text = std::to_string(value);
    if (text.size() < width) text.insert(0, width - text.size(), '0');
    return text;
  };
  constexpr std::size_t kMaxWidth = 10;
  std::string out;
  out.reserve(pattern.size());
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out.push_back(pattern[i]);
      continue;
    }
    std::size_t j = i + 1;
    std::size_t width = 0;
    while (j < pattern.size() &&
           absl::ascii_isdigit(static_cast<unsigned char>(pattern[j]))) {
      width = std::min(kMaxWidth, width * 10 + (pattern[j] - '0'));
      ++j;
    }
    if (j >= pattern.size()) {
      out.append(pattern.substr(i));
      break;
    }
    const bool has_width = j > i + 1;
    switch (pattern[j]) {
      case 'j':
        out.append(padded(job_id, width));
        break;
      case 'A':
        out.append(
            padded(array_task ? array_task->array_job_id : job_id, width));
        break;
      case 'a':
        out.append(padded(array_task ? array_task->task_id : kNoTask, width));
        break;
      case 'x':
        out.append(job_name);
        break;
      case 'u':
        out.append(user);
        break;
      case '%':
        if (!has_width) {
          out.push_back('%');
          break;
        }
        [[fallthrough]];
      default:
        out.append(pattern.substr(i, j - i + 1));
    }
    i = j;
  }
  return out;
}

// --nodelist names nodes the allocation must hold: with no --nodes (or
// fewer), the job asks for that many, as Slurm does.
absl::Status ResolveNodeLists(JobRequest& request) {
  for (const std::string& name : request.nodelist) {
    if (std::find(request.exclude.begin(), request.exclude.end(), name) !=
        request.exclude.end()) {
      return absl::InvalidArgumentError(
          Cat("node ", name, " is both in --nodelist and in --exclude"));
    }
  }
  const auto listed = static_cast<uint32_t>(request.nodelist.size());
  if (listed == 0) return absl::OkStatus();
  if (request.nodes && *request.nodes < listed) {
    request.warnings.push_back(Cat("--nodes=", *request.nodes, " raised to ",
                                   listed, ": --nodelist names ", listed,
                                   " node(s) and the job gets all of them"));
  }
  if (!request.nodes || *request.nodes < listed) request.nodes = listed;
  return absl::OkStatus();
}

absl::Status ResolveDerivedResources(JobRequest& request) {
  if (absl::Status lists = ResolveNodeLists(request); !lists.ok()) {
    return lists;
  }
  const uint32_t nodes = request.nodes.value_or(1);
  uint32_t tasks_per_node = request.ntasks_per_node.value_or(0);
  if (tasks_per_node == 0) {
    tasks_per_node = request.ntasks ? (*request.ntasks + nodes - 1) / nodes : 1;
  }
  auto set_gpus = [&](uint32_t per_node, const char* from) -> absl::Status {
    if (request.gpus_per_node && *request.gpus_per_node != per_node) {
      return absl::InvalidArgumentError(Cat(from, " asks for ", per_node,
                                            " GPU(s) per node but "
                                            "--gpus-per-node (or --gres) says ",
                                            *request.gpus_per_node));
    }
    request.gpus_per_node = per_node;
    return absl::OkStatus();
  };
  if (request.gpus_per_task) {
    absl::Status status =
        set_gpus(*request.gpus_per_task * tasks_per_node, "--gpus-per-task");
    if (!status.ok()) return status;
  }
  if (request.gpus) {
    const uint32_t per_node = (*request.gpus + nodes - 1) / nodes;
    if (*request.gpus % nodes != 0) {
      request.warnings.push_back(
          Cat("--gpus=", *request.gpus, " over ", nodes, " node(s): ", per_node,
              " GPU(s) on each node (", per_node * nodes, " in all)"));
    }
    absl::Status status = set_gpus(per_node, "--gpus");
    if (!status.ok()) return status;
  }
  const int memory_options = (request.mem_per_node_mb ? 1 : 0) +
                             (request.mem_per_cpu_mb ? 1 : 0) +
                             (request.mem_per_gpu_mb ? 1 : 0);
  if (memory_options > 1) {
    return absl::InvalidArgumentError(
        "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive");
  }
  if (request.mem_per_cpu_mb) {
    request.mem_per_node_mb = *request.mem_per_cpu_mb *
                              request.cpus_per_task.value_or(1) *
                              tasks_per_node;
  }
  if (request.mem_per_gpu_mb) {
    if (request.gpus_per_node.value_or(0) == 0) {
      return absl::InvalidArgumentError(
          "--mem-per-gpu needs GPUs (--gpus, --gpus-per-node, "
          "--gpus-per-task or --gres=gpu:N)");
    }
    request.mem_per_node_mb = *request.mem_per_gpu_mb * *request.gpus_per_node;
  }
  if (request.mem_per_node_mb && *request.mem_per_node_mb > kMaxMemoryMb) {
    return absl::InvalidArgumentError("more than 1 PiB of memory per node");
  }
  if (request.mem_per_node_mb && *request.mem_per_node_mb == 0) {
    // Slurm's --mem=0: all of each node's memory, which only a whole node
    // gives.
    request.mem_per_node_mb.reset();
    if (!request.exclusive) {
      request.exclusive = true;
      request.warnings.push_back(
          "--mem=0 (all of a node's memory): the job gets whole nodes, as "
          "with --exclusive");
    }
  }
  return absl::OkStatus();
}

}  // namespace gantry
