// Jobs as squeue, scancel and scontrol name them: "ID" (for an array, all
// its tasks) or "ID_TASK" (one task of array ID). The controller resolves
// selectors (v1::JobFilter.jobs): the CLI never lists every job to pick a
// few.
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/client.pb.h"

namespace gantry::cli {

struct JobSelector {
  uint64_t id = 0;
  std::optional<uint32_t> task;

  bool Matches(const v1::JobRecord& job) const;
};

// A positive job id, the whole of `text`.
bool ParseJobId(const std::string& text, uint64_t& id);

// "ID" or "ID_TASK"; nullopt for anything else.
std::optional<JobSelector> ParseJobSelector(const std::string& text);

// Every id of repeatable, comma-separated lists ("-j 1,2 -j 3_4").
// INVALID_ARGUMENT names the first that is not ID or ARRAYID_TASK.
absl::StatusOr<std::vector<JobSelector>> ParseJobSelectors(
    const std::vector<std::string>& lists);

// Adds the selectors to the filter the controller resolves.
void AddSelectors(const std::vector<JobSelector>& selectors,
                  v1::JobFilter& filter);

// Whether `job` is one the selectors name (any job when there are none).
bool Selected(const std::vector<JobSelector>& selectors,
              const v1::JobRecord& job);

}  // namespace gantry::cli
