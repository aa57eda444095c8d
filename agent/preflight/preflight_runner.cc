#include "agent/preflight/preflight_runner.h"

#include "agent/preflight/preflight_check.h"
#include "common/log.h"

namespace gantry::agent {

PreflightRunner::PreflightRunner(std::string node_name,
                                 const std::string& address, uint32_t port,
                                 HealthProblems health, Send send)
    : node_name_(std::move(node_name)),
      health_(std::move(health)),
      send_(std::move(send)) {
  absl::StatusOr<std::unique_ptr<PreflightListener>> listener =
      PreflightListener::Start(address, port);
  if (listener.ok()) {
    listener_ = std::move(*listener);
    log::Info("pre-flight listener ready",
              {{"address", address}, {"port", listener_->port()}});
  } else {
    log::Warn(
        "no pre-flight listener: this node fails the ring part of "
        "gang checks",
        {{"error", listener.status().ToString()}});
  }
}

PreflightRunner::~PreflightRunner() {
  cancelled_ = true;
  std::vector<std::thread> threads;
  {
    MutexLock lock(mutex_);
    threads.swap(threads_);
  }
  for (std::thread& thread : threads) thread.join();
}

void PreflightRunner::Start(const v1::PreflightCheck& check) {
  MutexLock lock(mutex_);
  threads_.emplace_back([this, check] { Run(check); });
}

void PreflightRunner::Run(v1::PreflightCheck check) {
  PreflightNode node;
  node.node_name = node_name_;
  node.listener = listener_.get();
  node.health_problems = health_;
  if (check.gloo()) {
    std::optional<std::string> known;
    {
      MutexLock lock(mutex_);
      known = torch_python_;
    }
    // Looked for once: python3 and torch do not come and go. (Two first
    // checks at once may both look; they find the same.)
    if (!known) {
      known = FindTorchPython();
      MutexLock lock(mutex_);
      torch_python_ = known;
    }
    node.torch_python = *known;
  }
  log::Info("pre-flight check", {{"job", check.job_id()},
                                 {"attempt", check.attempt()},
                                 {"nodes", check.peers_size()}});
  const v1::PreflightResult result = RunPreflightCheck(check, node, cancelled_);
  log::Info("pre-flight check done", {{"job", check.job_id()},
                                      {"passed", result.passed()},
                                      {"problem", result.problem()},
                                      {"send_mbps", result.send_mbps()},
                                      {"receive_mbps", result.receive_mbps()},
                                      {"elapsed_ms", result.elapsed_ms()}});
  if (!cancelled_) send_(result);
}

}  // namespace gantry::agent
