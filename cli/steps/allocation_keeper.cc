#include "cli/steps/allocation_keeper.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"

namespace gantry::cli {
namespace {

// Until the controller says (and when it has no inactive limit).
constexpr auto kDefaultInterval = std::chrono::milliseconds(60'000);
// A controller that does not answer (restarting, say) is asked this often.
constexpr auto kRetryInterval = std::chrono::milliseconds(1000);
// The longest a keepalive may take: one stuck on a dead connection must
// not stop the next.
constexpr auto kMaxCallTime = std::chrono::milliseconds(10'000);

bool StillHeld(const v1::KeepAllocationResponse& response) {
  return response.state() == v1::PENDING || response.state() == v1::RUNNING;
}

}  // namespace

AllocationKeeper::AllocationKeeper(std::string target, uint64_t job_id,
                                   EndedCallback on_ended,
                                   std::chrono::milliseconds max_interval)
    : target_(std::move(target)),
      user_(CurrentUser()),
      job_id_(job_id),
      on_ended_(std::move(on_ended)),
      max_interval_(max_interval),
      thread_([this] { Run(); }) {}

AllocationKeeper::~AllocationKeeper() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  thread_.join();
}

void AllocationKeeper::Run() {
  ControllerClient client(target_);
  v1::KeepAllocationRequest request;
  request.set_job_id(job_id_);
  request.set_user(user_);
  std::chrono::milliseconds interval = kDefaultInterval;
  if (max_interval_.count() > 0) interval = std::min(interval, max_interval_);
  while (true) {
    v1::KeepAllocationResponse response;
    const absl::Status status = client.KeepAllocation(
        request, response, std::min(kMaxCallTime, interval));
    std::chrono::milliseconds next = kRetryInterval;
    if (status.ok()) {
      if (!StillHeld(response)) {
        if (on_ended_) on_ended_(job_id_, response.reason_detail());
        return;
      }
      if (response.interval_ms() > 0) {
        interval = std::chrono::milliseconds(response.interval_ms());
      }
      if (max_interval_.count() > 0)
        interval = std::min(interval, max_interval_);
      next = interval;
    } else if (absl::IsNotFound(status) || absl::IsPermissionDenied(status) ||
               absl::IsFailedPrecondition(status)) {
      // Gone from the controller's live state (long over), or not ours to
      // keep: nothing more to do.
      if (on_ended_) on_ended_(job_id_, std::string(status.message()));
      return;
    } else {
      next = std::min(interval, kRetryInterval);
    }
    MutexLock lock(mutex_);
    const bool stopping = wake_.WaitFor(lock, next, [this] {
      mutex_.AssertHeld();
      return stopping_;
    });
    if (stopping) return;
  }
}

}  // namespace gantry::cli
