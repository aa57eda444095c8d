// Whether a failed job attempt is restarted, and after how long. Pure and
// thread-safe, so the rules are table-tested apart from the controller.
//
// The rules:
// - A time limit or a cancel is final: the job ends.
// - Every restart spends one unit of the job's budget (--max-restarts,
//   default 3). With the budget spent, the job ends FAILED saying so.
// - A node fault (node down, agent lost, ranks lost, bad hardware) or a
//   hang is restarted without delay for the first restart (the failed node
//   is drained, so the new attempt runs elsewhere), then with backoff.
//   Which nodes the restart may use is the controller's business (the
//   failed attempt's other nodes only once the fault has settled, see
//   daemon/controller/features/fault_survivors/).
// - An application failure (a rank exits non-zero or by a signal on a
//   healthy node, or is OOM-killed) ends the job FAILED (OUT_OF_MEMORY)
//   unless the job asked for restarts itself (--max-restarts N): as in
//   Slurm, where a failed script is not re-run. A job that asked is
//   restarted with backoff, once. If the next attempt fails
//   again with the same exit status and no node fault in between, it is an
//   application bug, not bad luck: the job ends FAILED instead of being
//   retried across the whole cluster. A different status counts afresh.
// - An out-of-memory kill (the job outgrew its own --mem in its cgroup) is
//   an application failure, not a node fault: the node is fine and is not
//   drained, and the same rules apply (one restart with backoff: a leak or
//   a data-dependent peak may not recur from a checkpoint; a second OOM in
//   a row ends the job OUT_OF_MEMORY, since a job that needs more memory
//   than it asked for only succeeds once resubmitted with more).
// - Our own crash (a controller or agent restart lost the attempt's ranks
//   on a node that did not fail) is restarted at once and spends nothing:
//   the job and the node did nothing wrong. attempts_started counts only
//   the charged attempts, so such attempts never exhaust the budget.
#pragma once

#include <cstdint>
#include <string>

namespace gantry {

enum class FailureKind {
  kApplication,  // a rank failed on a healthy node
  kOutOfMemory,  // a rank was OOM-killed in the job's cgroup
  kNodeFault,    // node down, agent lost, ranks lost, hardware unhealthy
  kHang,         // no progress within the job's hang timeout
  kOwnCrash,     // a controller or agent restart lost the ranks
  kTimeLimit,
  kCancelled,
};

struct RestartInput {
  FailureKind kind = FailureKind::kApplication;
  // Charged attempts, including the one that just failed (kOwnCrash
  // attempts are not charged: leave them out).
  uint32_t attempts_started = 1;
  uint32_t max_restarts = 3;
  // Whether the job itself set --max-restarts: only then is an application
  // failure restarted (node faults and hangs use max_restarts either way).
  bool restarts_requested = false;
  // Exit status of this failure (kApplication and kOutOfMemory only), and
  // the state carried from earlier attempts.
  int exit_code = 0;
  int signal = 0;
  uint32_t repeated_app_failures = 0;  // consecutive, same status
  int previous_exit_code = 0;
  int previous_signal = 0;
  int64_t backoff_base_ms = 1000;
};

struct RestartDecision {
  bool restart = false;
  int64_t backoff_ms = 0;
  // The updated count of consecutive identical application failures.
  uint32_t repeated_app_failures = 0;
  // Why the job ends, when it does not restart (for the job's reason).
  std::string final_detail;
};

RestartDecision DecideRestart(const RestartInput& input);

// kApplication and kOutOfMemory: the job's own doing, on a healthy node.
bool IsApplicationFailure(FailureKind kind);

}  // namespace gantry
