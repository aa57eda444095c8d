// The agent's side of pre-flight gang checks: owns the listener its ring
// predecessors send to, runs each PreflightCheck the controller sends on a
// thread of its own (agent/preflight/preflight_check.h), and hands the result
// to `send`. Checks of different jobs run side by side.
//
// Thread-safe. The destructor cancels running checks (their commands are
// killed) and waits for them.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "agent/preflight/preflight_listener.h"
#include "common/mutex.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

class PreflightRunner {
 public:
  using Send = std::function<void(const v1::PreflightResult&)>;
  using HealthProblems = std::function<std::vector<std::string>()>;

  // Listens on address:port (0: any free port). Without a listener (the
  // bind failed: logged) checks still run, and their ring part reports
  // that this node cannot take part in it.
  PreflightRunner(std::string node_name, const std::string& address,
                  uint32_t port, HealthProblems health, Send send);
  ~PreflightRunner();
  PreflightRunner(const PreflightRunner&) = delete;
  PreflightRunner& operator=(const PreflightRunner&) = delete;

  // Register.preflight_port: 0 when there is no listener.
  uint32_t port() const { return listener_ ? listener_->port() : 0; }
  // Null when there is none (see above).
  PreflightListener* listener() const { return listener_.get(); }
  // Starts `check` and returns at once.
  void Start(const v1::PreflightCheck& check);

 private:
  void Run(v1::PreflightCheck check);

  const std::string node_name_;
  const HealthProblems health_;
  const Send send_;
  std::unique_ptr<PreflightListener> listener_;
  std::atomic<bool> cancelled_{false};
  Mutex mutex_;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mutex_);
  std::optional<std::string> torch_python_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace gantry::agent
