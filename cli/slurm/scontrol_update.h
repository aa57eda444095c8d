// `scontrol update` assignments ("JobId=12 TimeLimit=2:00:00",
// "NodeName=n[1-2] State=DRAIN Reason=fan"), parsed into what Gantry can
// change: a job's time limit (absolute, or +/- relative), partition,
// name and GPUs per node (Gres=gpu:TYPE:N); a node's state (drain, resume; down
// and fail drain it) and reason. Keys are case-insensitive, as scontrol takes
// them.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::cli {

struct ScontrolUpdate {
  enum class Entity { kJob, kNode };
  Entity entity = Entity::kJob;
  // Jobs: the ids as given (ID, ID_TASK, comma-separated lists).
  std::vector<std::string> job_ids;
  // TimeLimit: seconds (0: UNLIMITED); with `time_limit_delta` set, a
  // change (+N / -N) to the current limit instead.
  std::optional<uint64_t> time_limit_seconds;
  int time_limit_delta = 0;  // +1, -1, or 0 for absolute
  std::optional<std::string> partition;
  std::optional<std::string> name;
  // Gres=gpu[:TYPE][:N] (TresPerNode=gres/gpu...): the GPUs per node and
  // their type ("" for any), both replaced; an empty value: no GPUs.
  std::optional<uint32_t> gpus_per_node;
  std::string gpu_type;
  // Nodes: host names (hostlists expanded), the wanted state (drain or
  // resume) and the reason.
  std::vector<std::string> nodes;
  bool drain = false;
  std::string reason;
  // What the caller should say on stderr: a state Gantry maps to another
  // (DOWN drains the node; running jobs go on).
  std::vector<std::string> notes;
};

// INVALID_ARGUMENT for a word without "=", an unknown key (naming it and
// what Gantry supports), no JobId/NodeName, a bad value, or a DRAIN/DOWN
// without a Reason.
absl::StatusOr<ScontrolUpdate> ParseScontrolUpdate(
    const std::vector<std::string>& words);

}  // namespace gantry::cli
