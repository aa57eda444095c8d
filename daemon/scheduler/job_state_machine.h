// The job state machine: a pure function from (state, event) to (next state,
// effects). The controller applies the effects (persist, kill ranks, release
// resources); nothing here does I/O. Thread-safe (no state).
//
//   PENDING --start--> RUNNING --all ranks exit 0--> COMPLETED
//      ^  |               |--a rank fails---------> FAILED
//      |  |               |--hang-----------------> FAILED
//      |  |               |--time limit-----------> TIMEOUT
//      |  |               |--client gone----------> TIMEOUT (InactiveLimit)
//      |  |               |--node lost------------> NODE_FAIL
//      |  |               |--a rank OOM-killed----> OUT_OF_MEMORY
//      |  |               |--deadline reached-----> DEADLINE
//      |  |--deadline cannot be met---------------> DEADLINE
//      |  +--cancel, client gone--> CANCELLED <--cancel--+
//      +---- a failure with `requeue` set (the restart policy said so) ----+
//      +---- scontrol requeue, from RUNNING or any end -------------------+
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

enum class JobStatus {
  kPending,
  kRunning,
  kCompleted,
  kFailed,
  kCancelled,
  kTimeout,
  kNodeFail,
  kOutOfMemory,
  kDeadline,
};

bool IsTerminal(JobStatus status);
// Slurm's spelling: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT,
// NODE_FAIL, OUT_OF_MEMORY, DEADLINE.
const char* JobStatusName(JobStatus status);

struct JobEvent {
  enum class Kind {
    kStart,       // the scheduler placed the job
    kRankExited,  // one rank ended
    kCancel,      // a user asked
    kTimeLimit,   // the job ran past its time limit
    // The client holding an interactive allocation (srun or salloc outside
    // a job) was not heard from for the inactive limit (Slurm's
    // InactiveLimit): a running one ends TIMEOUT, a pending one CANCELLED,
    // both with reason InactiveLimit.
    kClientGone,
    kNodeLost,  // a node holding its ranks is down
    kHang,      // no progress within the hang timeout
    // A user asked for another run (scontrol requeue): a running job is
    // stopped and goes back to PENDING, a finished one goes back at once.
    kRequeueRequest,
    // --deadline: a pending job can no longer end by it, or a running one
    // reached it. Ends either DEADLINE (reason DeadLine, as Slurm's).
    kDeadline,
    // The pre-flight gang check swapped nodes out before any rank started:
    // the attempt ends (reason Preflight) and the job is placed again.
    kPreflightFailed,
  };
  Kind kind;
  // For kRankExited.
  int exit_code = 0;
  int signal = 0;
  // The rank was killed by the OOM killer in the job's cgroup (it used
  // more memory than it asked for): OUT_OF_MEMORY rather than FAILED.
  bool out_of_memory = false;
  bool all_ranks_exited = false;
  // For failures (a failing rank exit, kNodeLost, kHang): go back to
  // PENDING for another attempt instead of ending.
  bool requeue = false;
};

// What the controller does for a transition, in this order; nothing else.
enum class JobEffect {
  // Once the start is durable, send the launch to the allocation's nodes.
  kLaunchRanks,
  // Once the transition is durable, stop whatever of the attempt still
  // runs: ranks, and step tasks on other nodes when the script ended
  // before them. Every exit from RUNNING has it.
  kKillRanks,
  // Close the current attempt in the job's history, and its open steps.
  kRecordAttemptEnd,
  kRecordEnd,  // set end time, exit code and reason
  kRequeue,    // back in the queue for the next attempt
  // Free the node shares whose ranks are gone; the others are freed as
  // their ranks' exits arrive. Every transition out of RUNNING or to an
  // end has it.
  kReleaseNodes,
};

struct JobTransition {
  JobStatus next;
  std::vector<JobEffect> effects;
  // Slurm reason word for how it (or the attempt) ended (NonZeroExitCode,
  // Signal, OutOfMemory, Cancelled, TimeLimit, InactiveLimit, NodeFail,
  // Hang); empty when
  // nothing ended.
  std::string reason;
};

// Errors: FAILED_PRECONDITION when the event makes no sense in the state
// (cancel of a finished job, start of a running one); the message is fit for
// the user. Events that can arrive late (a rank exit after the job was
// cancelled, a time limit or node loss after it ended) are accepted and
// change nothing.
absl::StatusOr<JobTransition> ApplyJobEvent(JobStatus current,
                                            const JobEvent& event);

}  // namespace gantry
