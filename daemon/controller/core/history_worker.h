// The controller's history thread: work whose cost grows with the job
// history (sacct and sreport pages read from a database snapshot, the
// expiry index's upkeep and each expiry pass's read of it) runs here, one
// task at a time in the order posted, so the controller's loop never waits
// on it. A task answers its caller itself (gRPC calls may finish from any
// thread) or posts its outcome back to the loop.
//
// Thread-safety: Post and Stop from any thread. Each task runs once, on the
// history thread: with `cancelled` false, or with `cancelled` true when
// Stop (or the destructor) found it still queued, so that every caller is
// answered. The destructor stops, waits for the task under way, and joins.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace gantry {

class HistoryWorker {
 public:
  using Task = std::function<void(bool cancelled)>;

  // At most `max_queued` tasks wait; more are refused (Post returns false).
  explicit HistoryWorker(size_t max_queued);
  ~HistoryWorker();
  HistoryWorker(const HistoryWorker&) = delete;
  HistoryWorker& operator=(const HistoryWorker&) = delete;

  // Queues `task`; false (and `task` not run) when the queue is full or
  // the worker stopped.
  bool Post(Task task);
  // Refuses further tasks and runs the queued ones cancelled; the one
  // under way finishes.
  void Stop();

 private:
  void Run();

  const size_t max_queued_;
  Mutex mutex_;
  CondVar wake_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace gantry
