// Jobs with no batch script, as srun and salloc make outside a job: the
// request from sbatch's option words, the wait for resources with Slurm's
// messages, the job's SLURM_* variables for a command run locally, and the
// end of the allocation. Used by one thread of the CLI at a time.
#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/client/controller_client.h"
#include "cli/steps/allocation_keeper.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// How an allocation is asked for and reported.
struct AllocationAsk {
  std::vector<std::string> option_words;  // sbatch's table (job_options.h)
  std::string default_name;               // the job name when -J gives none
  std::string program;  // "srun", "salloc": prefixes the messages
  bool quiet = false;   // -Q: no informational messages
  // salloc prints "Granted job allocation N" even when nothing waited;
  // srun says nothing then.
  bool announce_grant = false;
  // Where the allocation's keepalives go (the client's target).
  std::string target;
  // Runs (on the keeper's thread) when the allocation ends under its
  // client; see AllocationKeeper.
  AllocationKeeper::EndedCallback on_ended;
  // Keepalives at least this often (to hear of the end soon); zero: as
  // often as the controller asks.
  std::chrono::milliseconds keep_interval{0};
};

// A granted allocation, and what keeps it alive while this process holds
// it: ending it (EndAllocation, CancelAllocation) and then dropping the
// keeper is the client's way out.
struct Allocation {
  v1::JobRecord job;
  std::unique_ptr<AllocationKeeper> keeper;
};

// Submits the allocation and waits until it runs. Prints, to stderr,
// "PROGRAM: job N queued and waiting for resources" when it does not start
// at once and "PROGRAM: job N has been allocated resources" once it does
// (salloc: "Granted job allocation N"). Cancels the job and answers
// CANCELLED when `interrupted` becomes true while waiting; FAILED_PRECONDITION
// when the job ends before it starts (cancelled, refused); the submission's
// error when it is refused. The allocation is kept alive (AllocationKeeper)
// from its submission on, while it waits too.
absl::StatusOr<Allocation> AllocateJob(ControllerClient& client,
                                       const AllocationAsk& ask,
                                       const std::atomic<bool>& interrupted);

// Ends it: COMPLETED for exit 0 and no signal, FAILED otherwise.
absl::Status EndAllocation(ControllerClient& client, uint64_t job_id,
                           int exit_code, int signal);

// Cancels it (Ctrl-C): the job ends CANCELLED.
absl::Status CancelAllocation(ControllerClient& client, uint64_t job_id);

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (call it before
// other threads start, so that they all inherit the mask) and returns the
// set, for one thread to take them with sigwait: an interrupted srun or
// salloc still ends or cancels its allocation.
sigset_t BlockStopSignals();

// The job's SLURM_* variables for a command run locally in it (salloc's
// shell): what srun inside needs to find the allocation, and what scripts
// read (SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_NNODES, SLURM_NTASKS, ...).
std::map<std::string, std::string> AllocationEnvironment(
    const v1::JobRecord& job);

}  // namespace gantry::cli
