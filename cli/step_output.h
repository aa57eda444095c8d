// Receives a step's task output for `gantry run`, as srun does: each task's
// stdout and stderr arrive on TCP connections the task opens (the agent
// connects them before exec), each starting with "TOKEN TASK FD\n"; the
// data goes to this process's stdout or stderr, optionally labelled with
// the task id. Connections with the wrong token are dropped.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace gantry::cli {

class StepOutputServer {
 public:
  // Listens on every address (IPv6 and IPv4), on a port the kernel picks.
  static absl::StatusOr<std::unique_ptr<StepOutputServer>> Listen(
      std::string token, bool label);
  ~StepOutputServer();

  uint16_t port() const { return port_; }

  // Once the step has ended: waits until every connection has closed, and
  // up to `grace` for `expected` connections in all (tasks that never
  // started open none), then stops.
  void Finish(uint32_t expected, std::chrono::milliseconds grace);

 private:
  StepOutputServer(int listen_fd, uint16_t port, std::string token, bool label);
  void Serve();

  const int listen_fd_;
  const uint16_t port_;
  const std::string token_;
  const bool label_;
  int wake_[2] = {-1, -1};  // a pipe: Finish wakes the loop
  std::atomic<bool> finishing_{false};
  std::atomic<uint32_t> expected_{0};
  std::atomic<int64_t> give_up_ms_{0};
  std::thread thread_;
};

}  // namespace gantry::cli
