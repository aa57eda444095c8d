// A leader handing leadership to a standby on purpose (gantry handover,
// scontrol takeover), e.g. before its host is upgraded: the standby takes
// office in a fraction of a second, where a leader that is merely stopped
// leaves the cluster without one for an election (and, killed, for a
// lease's TTL).
//
// The steps, on a thread of their own:
//   1. choose the successor: a standby whose member record shows it has
//      applied the log to within kMaxSuccessorLag entries of the leader's
//      last index (the caught-up one furthest along, or the one named);
//   2. pause commits (acknowledge nothing more), so the log ends here;
//   3. in one etcd transaction, which holds only while this controller
//      still leads, name the successor in the successor key (on a lease of
//      kSuccessorTtlSeconds, so a successor that never comes does not block
//      the others for long) and delete the leader key
//      (Leadership::HandOver);
//   4. answer the caller, then re-execute as a standby (step_down.h).
// The successor's campaign watches the leader keys, takes the leader key,
// applies the log's tail and serves. Any refusal before step 3 (no such
// standby, none caught up, etcd in trouble) resumes commits and changes
// nothing: this controller goes on leading.
//
// Thread-safe: Start from any thread; one hand-over at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "daemon/replication/replicated_controller.h"
#include "gantry/v1/client.pb.h"
#include "gantry/v1/replication.pb.h"

namespace gantry::replication {

// A standby further behind than this many log entries is not handed
// leadership: it would keep the cluster without a leader while it applies
// them (one synced write each). Member records are republished every
// quarter lease TTL, so the figure they show may be that old.
inline constexpr uint64_t kMaxSuccessorLag = 256;
// How long the successor key holds the other standbys back.
inline constexpr int64_t kSuccessorTtlSeconds = 5;

// The standby to hand leadership to, among the member records `members`,
// for the leader `self` whose log ends at `last_index`. `requested`: a
// standby's name (empty: the caught-up standby that has applied the most;
// ties by name). Errors: INVALID_ARGUMENT when `requested` is `self`;
// NOT_FOUND when no controller has that name (the message lists them);
// FAILED_PRECONDITION when there is no standby, or it (or every one) lags
// by more than `max_lag` entries (the message says by how much).
absl::StatusOr<v1::ControllerMember> ChooseSuccessor(
    const std::vector<v1::ControllerMember>& members, const std::string& self,
    uint64_t last_index, const std::string& requested,
    uint64_t max_lag = kMaxSuccessorLag);

class Handover {
 public:
  // Called once with the outcome, from the hand-over's thread; it must
  // return once the answer has gone out (or after a short wait), since a
  // successful hand-over re-executes gantryd right after.
  using Answer = std::function<void(absl::StatusOr<v1::HandoverResponse>)>;
  using StepDown = std::function<void(const std::string& reason)>;

  // `controller` must be the elected leader and outlive this object.
  Handover(ReplicatedController& controller, StepDown step_down);
  ~Handover();
  Handover(const Handover&) = delete;
  Handover& operator=(const Handover&) = delete;

  // Starts a hand-over; FAILED_PRECONDITION (answered at once) while
  // another is under way.
  void Start(v1::HandoverRequest request, Answer answer);

 private:
  absl::StatusOr<v1::HandoverResponse> Run(const v1::HandoverRequest& request);

  ReplicatedController& controller_;
  const StepDown step_down_;
  Mutex mutex_;
  bool busy_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace gantry::replication
