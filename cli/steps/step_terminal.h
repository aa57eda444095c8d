// srun --pty on the caller's side: the connection the agent opens for step
// task 0's pseudo-terminal (step_pty.h on the node) joined to this
// process's terminal. Our terminal is put in raw mode (so Ctrl-C, Ctrl-Z
// and every other key go to the remote terminal, whose line discipline
// acts on them), keystrokes and window sizes (SIGWINCH) go to the node
// framed as common/pty_frames.h says, the remote output comes here as it
// is. The terminal's mode is restored when the connection ends.
//
// Attach() is called once, from any thread; Join() from the owner's.
#pragma once

#include <atomic>
#include <thread>

namespace gantry::cli {

class StepTerminal {
 public:
  StepTerminal();
  ~StepTerminal();
  StepTerminal(const StepTerminal&) = delete;
  StepTerminal& operator=(const StepTerminal&) = delete;

  // Takes the connection (after its header) and relays on a thread.
  void Attach(int socket_fd);
  // Waits (up to 10 s) for the relay to end: the remote terminal closed.
  void Join();

 private:
  void Relay(int socket_fd);

  std::thread thread_;
  std::atomic<bool> attached_{false};
  std::atomic<bool> relaying_{false};
  int stop_[2] = {-1, -1};  // a pipe: Join's deadline wakes the relay
};

}  // namespace gantry::cli
