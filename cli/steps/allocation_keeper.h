// Keeps an interactive allocation (srun or salloc outside a job) alive: a
// thread of its own tells the controller, every interval it asks for
// (a third of gantryd's --inactive-limit), that the allocation's client is
// still there, as Slurm's srun and salloc answer their controller's pings.
// When this process dies, the keepalives stop and the controller ends the
// allocation after the inactive limit instead of letting it hold its nodes
// until the time limit. A controller that cannot be reached is asked again
// every second, so a restarted one hears from the client within its grace
// period.
//
// The answers also say when the allocation ended under the client
// (scancel, the time limit, a node failure): `on_ended` runs then, once.
//
// Thread-safe: construction and destruction from one thread; the callback
// runs on the keeper's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace gantry::cli {

class AllocationKeeper {
 public:
  // `detail`: how it ended, as the controller says (may be empty).
  using EndedCallback =
      std::function<void(uint64_t job_id, const std::string& detail)>;

  // Starts keeping `job_id` at once, through the controller at `target`,
  // at least every `max_interval` when that is not zero.
  AllocationKeeper(std::string target, uint64_t job_id,
                   EndedCallback on_ended = nullptr,
                   std::chrono::milliseconds max_interval = {});
  // Stops (waits for a keepalive in flight, a few seconds at most).
  ~AllocationKeeper();
  AllocationKeeper(const AllocationKeeper&) = delete;
  AllocationKeeper& operator=(const AllocationKeeper&) = delete;

 private:
  void Run();

  const std::string target_;
  // Who the keepalives claim to come from (with gantryd --auth=none): the
  // allocation's owner, as the submission claimed it (CurrentUser). Read
  // here, on the caller's thread: the password database is not
  // thread-safe.
  const std::string user_;
  const uint64_t job_id_;
  const EndedCallback on_ended_;
  const std::chrono::milliseconds max_interval_;
  Mutex mutex_;
  CondVar wake_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace gantry::cli
