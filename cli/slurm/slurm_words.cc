#include "cli/slurm/slurm_words.h"

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

struct StateWord {
  const char* name;
  const char* short_name;
  v1::JobState state;
};

constexpr StateWord kStates[] = {
    {"PENDING", "PD", v1::PENDING},
    {"RUNNING", "R", v1::RUNNING},
    {"COMPLETED", "CD", v1::COMPLETED},
    {"FAILED", "F", v1::FAILED},
    {"CANCELLED", "CA", v1::CANCELLED},
    {"TIMEOUT", "TO", v1::TIMEOUT},
    {"NODE_FAIL", "NF", v1::NODE_FAIL},
    {"OUT_OF_MEMORY", "OOM", v1::OUT_OF_MEMORY},
    {"DEADLINE", "DL", v1::DEADLINE},
};

// Slurm's other job states (long and short forms): no Gantry job is ever
// in one, so naming one selects nothing rather than being an error.
constexpr const char* kOtherSlurmStates[] = {
    "BOOT_FAIL",    "BF", "COMPLETING",    "CG", "CONFIGURING",  "CF",
    "PREEMPTED",    "PR", "RESV_DEL_HOLD", "RD", "REQUEUE_FED",  "RF",
    "REQUEUE_HOLD", "RH", "REQUEUED",      "RQ", "RESIZING",     "RS",
    "REVOKED",      "RV", "SIGNALING",     "SI", "SPECIAL_EXIT", "SE",
    "STAGE_OUT",    "SO", "STOPPED",       "ST", "SUSPENDED",    "S"};

}  // namespace

absl::StatusOr<std::set<v1::JobState>> ParseJobStates(std::string_view list) {
  std::set<v1::JobState> states;
  for (absl::string_view item :
       absl::StrSplit(AsAbsl(list), ',', absl::SkipEmpty())) {
    const std::string word = absl::AsciiStrToUpper(item);
    if (word == "ALL") {
      for (const StateWord& known : kStates) states.insert(known.state);
      continue;
    }
    bool found = false;
    for (const StateWord& known : kStates) {
      // Slurm also spells it CANCELED.
      if (word == known.name || word == known.short_name ||
          (known.state == v1::CANCELLED && word == "CANCELED")) {
        states.insert(known.state);
        found = true;
        break;
      }
    }
    for (const char* other : kOtherSlurmStates) {
      if (!found && word == other) {
        states.insert(v1::JOB_STATE_UNSPECIFIED);  // matches no job
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid job state \"", item,
          "\": use PENDING (PD), RUNNING (R), COMPLETED (CD), FAILED (F), "
          "CANCELLED (CA), TIMEOUT (TO), NODE_FAIL (NF), OUT_OF_MEMORY (OOM), "
          "DEADLINE (DL) or all, separated by commas (Slurm's other states are "
          "accepted "
          "and match no Gantry job)"));
    }
  }
  if (states.empty()) {
    return absl::InvalidArgumentError(
        "empty job state list: give states such as PD,R or all");
  }
  return states;
}

bool IsFinished(v1::JobState state) {
  return state != v1::PENDING && state != v1::RUNNING &&
         state != v1::JOB_STATE_UNSPECIFIED;
}

std::string OrNull(const std::string& value) {
  return value.empty() ? "(null)" : value;
}

}  // namespace gantry::cli
