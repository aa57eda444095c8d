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
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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
  std::mutex mutex_;
  int source_fd_ = -1;         // GUARDED_BY(mutex_) until started
  bool owns_source_ = false;   // GUARDED_BY(mutex_)
  std::vector<int> incoming_;  // GUARDED_BY(mutex_)
  uint32_t attached_ = 0;      // GUARDED_BY(mutex_)
  uint32_t expected_ = 0;      // GUARDED_BY(mutex_)
  bool expecting_ = false;     // GUARDED_BY(mutex_)
  std::chrono::steady_clock::time_point start_by_;  // GUARDED_BY(mutex_)
  bool stopping_ = false;                           // GUARDED_BY(mutex_)
  std::thread thread_;
};

}  // namespace gantry::cli
