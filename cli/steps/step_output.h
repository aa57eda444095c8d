// Receives a step's task output for `gantry run`, as srun does: each task's
// stdout and stderr arrive on TCP connections the task opens (the agent
// connects them before exec), each starting with "TOKEN TASK FD\n"; the
// data goes to this process's stdout or stderr, optionally labelled with
// the task id. Connections with the wrong token are dropped. A task that
// reads srun's stdin opens "TOKEN TASK 0\n" (srun -i, step_input_relay.h)
// and is handed over. sattach
// connects with "TOKEN attach\n" and gets a copy of every later chunk of
// output, framed as "TASK STREAM LENGTH\n" and the bytes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace gantry::cli {

// Where one task's stream goes (srun -o/-e): a file descriptor to write
// to, or -1 to drop it. Called on the server's thread only.
using StepOutputRouter = std::function<int(uint32_t task, int stream)>;
// srun --pty: takes task 0's terminal connection ("TOKEN 0 pty").
using StepTerminalHandler = std::function<void(int fd)>;
// srun -i: takes a task's stdin connection ("TOKEN TASK 0"); without one
// such connections are closed (the task reads end of file).
using StepInputHandler = std::function<void(uint32_t task, int fd)>;

class StepOutputServer {
 public:
  // Listens on a port the kernel picks: on the address `host` (the name
  // the agents are told to connect to) resolves to when that is a single
  // non-loopback address of this host, else on every address (IPv6 and
  // IPv4). Without a router each task's stdout and stderr go to ours.
  static absl::StatusOr<std::unique_ptr<StepOutputServer>> Listen(
      std::string token, bool label, const std::string& host,
      StepOutputRouter router = nullptr, StepTerminalHandler terminal = nullptr,
      StepInputHandler input = nullptr);
  ~StepOutputServer();

  uint16_t port() const { return port_; }

  // Once the step has ended: waits until every connection has closed, and
  // up to `grace` for `expected` connections in all (tasks that never
  // started open none), then stops.
  void Finish(uint32_t expected, std::chrono::milliseconds grace);

 private:
  StepOutputServer(int listen_fd, uint16_t port, std::string token, bool label,
                   StepOutputRouter router, StepTerminalHandler terminal,
                   StepInputHandler input);
  void Serve();

  const int listen_fd_;
  const uint16_t port_;
  const std::string token_;
  const bool label_;
  const StepOutputRouter router_;
  const StepTerminalHandler terminal_;
  const StepInputHandler input_;
  int wake_[2] = {-1, -1};  // a pipe: Finish wakes the loop
  std::atomic<bool> finishing_{false};
  std::atomic<uint32_t> expected_{0};
  std::atomic<int64_t> give_up_ms_{0};
  std::thread thread_;
};

}  // namespace gantry::cli
