#include "cli/slurm/scontrol_update.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/hostlist.h"
#include "common/job_options.h"
#include "common/option_values.h"

namespace gantry::cli {
namespace {

constexpr char kJobKeys[] =
    "JobId, TimeLimit (+/- to change it), Partition, JobName (or Name), "
    "Gres (or TresPerNode)";
constexpr char kNodeKeys[] =
    "NodeName, State (DRAIN, DOWN, FAIL, RESUME, IDLE, UNDRAIN), Reason";

absl::Status SetNodeState(const std::string& value, ScontrolUpdate& update) {
  const std::string state = absl::AsciiStrToUpper(value);
  if (state == "DRAIN") {
    update.drain = true;
  } else if (state == "DOWN" || state == "FAIL" || state == "FAILING") {
    update.drain = true;
    update.notes.push_back(absl::StrCat(
        "State=", value,
        ": Gantry drains the node (no new work; its running jobs go on)"));
  } else if (state == "RESUME" || state == "IDLE" || state == "UNDRAIN") {
    update.drain = false;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid node state \"", value,
        "\": Gantry takes DRAIN, DOWN, FAIL (all three drain the node), "
        "RESUME, IDLE or UNDRAIN"));
  }
  return absl::OkStatus();
}

absl::Status SetTimeLimit(const std::string& value, ScontrolUpdate& update) {
  std::string text = value;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    update.time_limit_delta = text[0] == '+' ? 1 : -1;
    text.erase(0, 1);
  }
  const std::string upper = absl::AsciiStrToUpper(text);
  if (upper == "UNLIMITED" || upper == "INFINITE") {
    if (update.time_limit_delta != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid TimeLimit \"", value, "\": UNLIMITED takes no + or -"));
    }
    update.time_limit_seconds = 0;
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> seconds = ParseTimeLimit(text);
  if (!seconds.ok()) return seconds.status();
  update.time_limit_seconds = *seconds;
  return absl::OkStatus();
}

// Gres=gpu:a100:2, TresPerNode=gres/gpu:a100:2 (or gres:gpu:..., as
// scontrol show job prints it), the same words as sbatch --gres.
absl::Status SetGres(const std::string& key, std::string value,
                     ScontrolUpdate& update) {
  for (std::string_view prefix : {"gres/", "gres:"}) {
    if (value.rfind(prefix, 0) == 0) value.erase(0, prefix.size());
  }
  if (value.empty() || absl::AsciiStrToLower(value) == "(null)") {
    update.gpus_per_node = 0;
    update.gpu_type.clear();
    return absl::OkStatus();
  }
  JobRequest request;
  if (absl::Status status =
          ApplyJobOptions({"--gres=" + value}, key + "=", request);
      !status.ok()) {
    return status;
  }
  update.gpus_per_node = request.gpus_per_node.value_or(0);
  update.gpu_type = request.gpu_type;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ScontrolUpdate> ParseScontrolUpdate(
    const std::vector<std::string>& words) {
  ScontrolUpdate update;
  bool job = false, node = false, state = false;
  for (const std::string& word : words) {
    const std::size_t equals = word.find('=');
    if (equals == std::string::npos || equals == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid update \"", word,
          "\": give KEY=VALUE, e.g. JobId=12 "
          "TimeLimit=1:00:00 or NodeName=n1 State=DRAIN Reason=why"));
    }
    const std::string key = absl::AsciiStrToLower(word.substr(0, equals));
    const std::string value = word.substr(equals + 1);
    absl::Status status;
    if (key == "jobid") {
      job = true;
      for (absl::string_view id : absl::StrSplit(value, ',', absl::SkipEmpty()))
        update.job_ids.emplace_back(id);
    } else if (key == "timelimit") {
      status = SetTimeLimit(value, update);
    } else if (key == "partition") {
      if (value.empty()) {
        status = absl::InvalidArgumentError("Partition= needs a name");
      }
      update.partition = value;
    } else if (key == "jobname" || key == "name") {
      if (value.empty()) {
        status = absl::InvalidArgumentError(
            absl::StrCat(word.substr(0, equals), "= needs a name"));
      }
      update.name = value;
    } else if (key == "gres" || key == "trespernode") {
      status = SetGres(word.substr(0, equals), value, update);
    } else if (key == "nodename") {
      node = true;
      absl::StatusOr<std::vector<std::string>> hosts = ExpandHostlist(value);
      if (!hosts.ok()) {
        status = absl::InvalidArgumentError(absl::StrCat(
            "invalid NodeName \"", value, "\": ", hosts.status().message()));
      } else {
        update.nodes.insert(update.nodes.end(), hosts->begin(), hosts->end());
      }
    } else if (key == "state") {
      state = true;
      status = SetNodeState(value, update);
    } else if (key == "reason") {
      update.reason = value;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("update of \"", word.substr(0, equals),
                       "\" is not supported: Gantry updates jobs (", kJobKeys,
                       ") and nodes (", kNodeKeys, ")"));
    }
    if (!status.ok()) return status;
  }
  if (job == node) {
    return absl::InvalidArgumentError(
        job ? "give JobId or NodeName, not both"
            : absl::StrCat("what to update? give JobId=ID (with ", kJobKeys,
                           ") or NodeName=NODES (with ", kNodeKeys, ")"));
  }
  if (job) {
    const bool node_keys = state || !update.reason.empty();
    if (node_keys) {
      return absl::InvalidArgumentError(
          "State and Reason are for NodeName=, not JobId=");
    }
    if (update.job_ids.empty()) {
      return absl::InvalidArgumentError("JobId= needs a job id");
    }
    if (!update.time_limit_seconds && !update.partition && !update.name &&
        !update.gpus_per_node) {
      return absl::InvalidArgumentError(
          absl::StrCat("nothing to update for the job: give ", kJobKeys));
    }
    return update;
  }
  update.entity = ScontrolUpdate::Entity::kNode;
  if (update.time_limit_seconds || update.partition || update.name ||
      update.gpus_per_node) {
    return absl::InvalidArgumentError(
        "TimeLimit, Partition, JobName and Gres are for JobId=, not "
        "NodeName=");
  }
  if (!state) {
    return absl::InvalidArgumentError(
        "nothing to update for the node: give State=DRAIN Reason=... or "
        "State=RESUME");
  }
  if (update.drain && update.reason.empty()) {
    return absl::InvalidArgumentError(
        "State=DRAIN (and DOWN, FAIL) needs a Reason=");
  }
  return update;
}

}  // namespace gantry::cli
