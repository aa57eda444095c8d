#include "daemon/replication/handover.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/log.h"
#include "daemon/replication/controller_members.h"

namespace gantry::replication {
namespace {

// How long a pause waits for a commit under way; one waiting longer is
// waiting for etcd, which is then in no state for a hand-over.
constexpr auto kPauseWait = std::chrono::seconds(1);

uint64_t LagOf(const v1::ControllerMember& member, uint64_t last_index) {
  return member.applied_index() >= last_index
             ? 0
             : last_index - member.applied_index();
}

std::string Behind(const v1::ControllerMember& member, uint64_t last_index) {
  return absl::StrCat(member.name(), " is ", LagOf(member, last_index),
                      " log entries behind (applied ", member.applied_index(),
                      " of ", last_index, ")");
}

}  // namespace

absl::StatusOr<v1::ControllerMember> ChooseSuccessor(
    const std::vector<v1::ControllerMember>& members, const std::string& self,
    uint64_t last_index, const std::string& requested, uint64_t max_lag) {
  if (!requested.empty() && requested == self) {
    return absl::InvalidArgumentError(
        absl::StrCat(self, " already leads: name a standby"));
  }
  std::vector<const v1::ControllerMember*> standbys;
  std::vector<std::string> names;
  for (const v1::ControllerMember& member : members) {
    names.push_back(member.name());
    if (member.name() == self || member.role() != "standby" ||
        member.address().empty()) {
      continue;
    }
    standbys.push_back(&member);
  }
  std::sort(names.begin(), names.end());
  if (!requested.empty()) {
    auto named = std::find_if(
        standbys.begin(), standbys.end(),
        [&](const v1::ControllerMember* m) { return m->name() == requested; });
    if (named == standbys.end()) {
      return absl::NotFoundError(absl::StrCat("no standby named ", requested,
                                              "; the controllers are ",
                                              absl::StrJoin(names, ", ")));
    }
    if (LagOf(**named, last_index) > max_lag) {
      return absl::FailedPreconditionError(
          absl::StrCat(Behind(**named, last_index),
                       "; it can take over once within ", max_lag, " entries"));
    }
    return **named;
  }
  if (standbys.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no standby to hand leadership to (controllers in etcd: ",
        absl::StrJoin(names, ", "), "); start another gantryd with --etcd"));
  }
  const v1::ControllerMember* best = nullptr;
  std::vector<std::string> behind;
  for (const v1::ControllerMember* standby : standbys) {
    if (LagOf(*standby, last_index) > max_lag) {
      behind.push_back(Behind(*standby, last_index));
      continue;
    }
    if (best == nullptr || standby->applied_index() > best->applied_index() ||
        (standby->applied_index() == best->applied_index() &&
         standby->name() < best->name())) {
      best = standby;
    }
  }
  if (best == nullptr) {
    std::sort(behind.begin(), behind.end());
    return absl::FailedPreconditionError(
        absl::StrCat("no standby has caught up with the log: ",
                     absl::StrJoin(behind, "; ")));
  }
  return *best;
}

Handover::Handover(ReplicatedController& controller, StepDown step_down)
    : controller_(controller), step_down_(std::move(step_down)) {}

Handover::~Handover() {
  std::thread last;
  {
    MutexLock lock(mutex_);
    last = std::move(thread_);
  }
  // Unlocked: a hand-over under way takes the mutex as it ends.
  if (last.joinable()) last.join();
}

void Handover::Start(v1::HandoverRequest request, Answer answer) {
  MutexLock lock(mutex_);
  if (busy_) {
    answer(absl::FailedPreconditionError(
        "a hand-over is already under way on this controller"));
    return;
  }
  if (thread_.joinable()) thread_.join();  // the last one, finished
  busy_ = true;
  thread_ = std::thread(
      [this, request = std::move(request), answer = std::move(answer)] {
        absl::StatusOr<v1::HandoverResponse> result = Run(request);
        const bool handed = result.ok();
        const std::string successor = handed ? result->successor() : "";
        answer(std::move(result));
        if (handed) {
          step_down_(absl::StrCat("leadership handed over to ", successor));
        }
        MutexLock lock(mutex_);
        busy_ = false;
      });
}

absl::StatusOr<v1::HandoverResponse> Handover::Run(
    const v1::HandoverRequest& request) {
  Leadership& leadership = controller_.leadership();
  ReplicatedStore& store = controller_.replicated_store();
  const std::string& self = leadership.name();
  if (!request.leader().empty() && request.leader() != self) {
    return absl::FailedPreconditionError(
        absl::StrCat("this controller is ", self, ", not ", request.leader(),
                     ": ", request.leader(), " does not lead"));
  }
  if (!leadership.Valid() || !store.etcd_answering()) {
    return absl::UnavailableError(
        "etcd is in trouble (this controller's lease or its last append "
        "went unanswered): no hand-over until it answers again");
  }
  absl::StatusOr<std::vector<v1::ControllerMember>> members =
      ReadControllerMembers(controller_.etcd(), controller_.keys(),
                            controller_.seal());
  if (!members.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot read the standbys from etcd (",
                     members.status().message(), "); nothing changed"));
  }
  absl::StatusOr<v1::ControllerMember> successor =
      ChooseSuccessor(*members, self, store.last_index(), request.successor());
  if (!successor.ok()) return successor.status();
  absl::StatusOr<int64_t> lease =
      controller_.etcd().GrantLease(kSuccessorTtlSeconds);
  if (!lease.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot get an etcd lease for the hand-over (",
                     lease.status().message(), "); nothing changed"));
  }
  const auto paused_at = std::chrono::steady_clock::now();
  if (!store.PauseCommits(kPauseWait)) {
    controller_.etcd().RevokeLease(*lease).IgnoreError();
    return absl::UnavailableError(
        "a commit has waited for etcd for a second: no hand-over while etcd "
        "is slow; nothing changed");
  }
  v1::HandoverRecord record;
  record.set_successor(successor->name());
  record.set_successor_address(successor->address());
  record.set_from(self);
  record.set_last_index(store.last_index());
  record.set_created_ms(RealClock().NowMs());
  if (absl::Status handed = leadership.HandOver(record, *lease); !handed.ok()) {
    store.ResumeCommits();
    controller_.etcd().RevokeLease(*lease).IgnoreError();
    log::Warn("hand-over refused",
              {{"successor", successor->name()}, {"error", handed.ToString()}});
    return handed;
  }
  const auto took = std::chrono::steady_clock::now() - paused_at;
  log::Warn(
      "leadership handed over",
      {{"successor", successor->name()},
       {"address", successor->address()},
       {"last_index", record.last_index()},
       {"successor_applied_index", successor->applied_index()},
       {"paused_ms",
        std::chrono::duration_cast<std::chrono::milliseconds>(took).count()}});
  v1::HandoverResponse response;
  response.set_leader(self);
  response.set_successor(successor->name());
  response.set_successor_address(successor->address());
  response.set_last_index(record.last_index());
  response.set_successor_applied_index(successor->applied_index());
  return response;
}

}  // namespace gantry::replication
