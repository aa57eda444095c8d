// srun's stdin (or the file srun -i names on srun's host) sent to the
// step's tasks that read it: each such task connects to srun
// ("TOKEN TASK 0", step_output.h) and reads what srun reads, as srun's
// default broadcast does; when the source ends, each task's connection is
// shut for writing, so the task reads end of file.
//
// Reading starts once every task that will connect has connected (or
// kStartAfter has passed since the step started: a task that failed to
// start never connects), so no task misses the beginning. A task that
// stops reading holds the others back once kMaxPending bytes wait for it
// (as srun's bounded buffers do); a task that has exited is dropped.
//
// Thread-safe: Attach comes from the output server's thread, Expect and
// Stop from the thread that runs the step; the relay has its own thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace gantry::cli {

class StepInputRelay {
 public:
  static constexpr size_t kMaxPending = 1 << 20;
  static constexpr std::chrono::seconds kStartAfter{10};

  StepInputRelay();
  ~StepInputRelay();  // Stop()
  StepInputRelay(const StepInputRelay&) = delete;
  StepInputRelay& operator=(const StepInputRelay&) = delete;

  // A task's stdin connection; the relay owns `fd` from now on.
  void Attach(uint32_t task, int fd);
  // The step started: `connections` tasks will connect, and they read
  // `source_fd` (closed at the end when `owns_source`; -1: nothing, they
  // read end of file at once). Called once.
  void Start(uint32_t connections, int source_fd, bool owns_source);
  // The step ended: closes the tasks' connections and the thread ends.
  void Stop();

 private:
  struct Sink {
    int fd = -1;
    std::string pending;  // read from the source, not yet sent
    bool shut = false;    // the end was sent
  };
  void Run();
  void Wake();
  // Sends what it can without blocking; false when the task is gone.
  static bool Flush(Sink& sink);

  int wake_[2] = {-1, -1};
  Mutex mutex_;
  // The relay thread reads source_fd_ without the lock once it started.
  int source_fd_ ABSL_GUARDED_BY(mutex_) = -1;
  bool owns_source_ ABSL_GUARDED_BY(mutex_) = false;
  std::vector<int> incoming_ ABSL_GUARDED_BY(mutex_);
  uint32_t attached_ ABSL_GUARDED_BY(mutex_) = 0;
  uint32_t expected_ ABSL_GUARDED_BY(mutex_) = 0;
  bool expecting_ ABSL_GUARDED_BY(mutex_) = false;
  std::chrono::steady_clock::time_point start_by_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace gantry::cli
