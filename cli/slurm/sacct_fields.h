// sacct's rows and fields: which lines a job gives (the job, N.batch for
// the batch script, N.0, N.1, ... for its steps) and each field's value in
// Slurm's spelling (states, ExitCode code:signal, [D-]HH:MM:SS durations,
// YYYY-MM-DDTHH:MM:SS times, TRES strings), with its default width.
//
// Pure (times in local time from the C library's time zone); the field
// table is immutable; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// One line of sacct.
struct SacctRow {
  enum class Kind { kJob, kBatch, kStep };
  const v1::JobRecord* job = nullptr;
  Kind kind = Kind::kJob;
  const v1::StepRecord* step = nullptr;  // for kStep
};

// What the values depend on besides the job.
struct SacctContext {
  int64_t now_ms = 0;  // the elapsed time of what still runs
  std::string cluster;
  // uid/gid -> name; unset: the number as text.
  std::function<std::string(uint32_t)> group_name;
};

struct SacctField {
  const char* name;  // Slurm's spelling, as the header shows it
  // Default width: positive right-aligns, negative left-aligns.
  int width;
  std::string (*value)(const SacctRow& row, const SacctContext& context);
};

// Every field, in Slurm's --helpformat order (alphabetical).
const std::vector<SacctField>& SacctFields();
// By name, case-insensitively; null when unknown.
const SacctField* FindSacctField(std::string_view name);

// The rows of one job: the job; then, unless `allocations_only` (-X), the
// batch script once the job has started and every step kept in its
// record. `step` non-empty ("batch", "0", ...): only that step's row.
std::vector<SacctRow> SacctRowsOf(const v1::JobRecord& job,
                                  bool allocations_only,
                                  std::string_view step = "");

// Slurm's value spellings, shared with sreport and sstat.
std::string SlurmDuration(int64_t seconds);  // [D-]HH:MM:SS
std::string SlurmTime(int64_t ms);           // YYYY-MM-DDTHH:MM:SS, Unknown
std::string SlurmMemory(uint64_t mb);        // 512M, 16G, 2T
// "CANCELLED by 1000", "COMPLETED", ... for the job's own line.
std::string SacctJobState(const v1::JobRecord& job);

}  // namespace gantry::cli
