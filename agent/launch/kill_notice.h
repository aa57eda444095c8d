// Slurm's cancel notice in a job's output. When a job is cancelled or runs
// past its time limit, slurmstepd writes into the batch script's stderr
//   slurmstepd: error: *** JOB 12 ON n1 CANCELLED AT 2026-12-04T10:11:12 ***
// (" DUE TO TIME LIMIT" before " ***" for a time limit), and into a step's
// stderr, which srun forwards, the same with "STEP 12.0"; scripts and
// workflow tools grep for these lines, so they are written byte for byte.
// Only the node that runs the batch script (or the step's task 0) writes,
// once, and only for a cancel or a time limit (KillRanks.reason).
//
// The agent is root and the output file is the user's: a file is appended
// to with the job user's credentials (user_file_access.h); a step whose
// output goes to its waiting srun gets the line over one more connection
// to it, as the task's stderr (task 0, stream 2).
//
// Thread-safe: pure functions, and writers that touch only their arguments.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "agent/launch/rank_identity.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

// Where one batch script's or step's stderr goes, as its task 0 was
// started on this node.
struct KillNoticeTarget {
  uint64_t job_id = 0;
  uint32_t step = 0;  // 0: the batch script; else the step's wire id
  RankIdentity identity;
  // The stderr file, absolute; empty when the step's output goes to srun.
  std::string error_path;
  // The waiting srun's address and the step's token (step_output.h).
  std::string io_address;
  std::string io_token;
};

// Slurm's time format (slurm_make_time_str's default, "%FT%T") in the
// node's local time zone.
std::string SlurmTimeString(std::time_t when);

// The line, with its newline, for `reason`; nullopt for REASON_OTHER (a
// requeue, a node failure, an allocation's end write nothing). `step` is
// the wire id (0: the job's batch script), shown as Slurm's step number.
std::optional<std::string> FormatKillNotice(uint64_t job_id, uint32_t step,
                                            const std::string& node,
                                            v1::KillRanks::Reason reason,
                                            const std::string& time);

// Writes `line` where `target` says, giving up after `timeout`.
// Errors: those of AppendToFileAsUser, or UNAVAILABLE / DEADLINE_EXCEEDED
// when the srun cannot be reached.
absl::Status WriteKillNotice(const KillNoticeTarget& target,
                             const std::string& line,
                             std::chrono::milliseconds timeout);

}  // namespace gantry::agent
