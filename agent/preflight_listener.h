// The agent's pre-flight listener: a TCP port on the node's compute
// address (announced in Register.preflight_port) where the ring
// predecessor of a pre-flight gang check sends its bytes
// (agent/preflight_wire.h). What arrived is kept by the check's token until
// this node's own check collects it (the predecessor may start first).
//
// A connection that does not start with a valid header within a second is
// dropped; at most kMaxConnections are served at once and a bounded number
// of results is kept, so a stray client costs little.
//
// Thread-safe. One thread accepts; each connection is served on its own
// thread; the destructor ends them all.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::agent {

class PreflightListener {
 public:
  // What the predecessor's transfer gave: its rate, or why it failed.
  struct Received {
    double mbps = 0;
    std::string problem;  // empty: all bytes arrived
  };

  // Listens on address:port (0: a free port the OS picks).
  static absl::StatusOr<std::unique_ptr<PreflightListener>> Start(
      const std::string& address, uint32_t port);
  ~PreflightListener();
  PreflightListener(const PreflightListener&) = delete;
  PreflightListener& operator=(const PreflightListener&) = delete;

  uint32_t port() const { return port_; }

  // The transfer that came with `token`, waiting for it until `deadline`;
  // nullopt if none finished by then.
  std::optional<Received> WaitFor(
      const std::string& token, std::chrono::steady_clock::time_point deadline);

 private:
  static constexpr size_t kMaxConnections = 32;
  static constexpr size_t kResultsKept = 256;

  PreflightListener(int fd, uint32_t port);
  void AcceptLoop();
  void Serve(int fd);
  void Record(const std::string& token, Received received);

  const int listen_fd_;
  const uint32_t port_;
  int wake_[2] = {-1, -1};  // a pipe that ends AcceptLoop's poll
  std::thread acceptor_;

  std::mutex mutex_;
  std::condition_variable arrived_;
  bool stopping_ = false;                    // guarded by mutex_
  std::set<int> serving_;                    // guarded by mutex_
  std::map<int, std::thread> threads_;       // guarded by mutex_
  std::vector<std::thread> finished_;        // guarded by mutex_
  std::map<std::string, Received> results_;  // guarded by mutex_
  std::deque<std::string> result_order_;     // guarded by mutex_
};

}  // namespace gantry::agent
