#include "daemon/replication/step_down.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/log.h"

namespace gantry::replication {
namespace {

std::atomic<bool> stopping{false};

}  // namespace

void StopInsteadOfSteppingDown() { stopping.store(true); }

void StepDown(char** argv, const std::string& reason) {
  static std::atomic<bool> stepping_down{false};
  if (stepping_down.exchange(true)) {
    // Said too, so that no reason to step down goes unlogged.
    log::Warn("also found this controller must step down (under way)",
              {{"reason", reason}});
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (stopping.load()) {
    // What is durable is in RocksDB and etcd, as for a re-execution; what
    // is not was never acknowledged.
    log::Warn("stepping down while stopping: exiting", {{"reason", reason}});
    std::_Exit(0);
  }
  log::Error("stepping down: starting over as a standby", {{"reason", reason}});
  execv("/proc/self/exe", argv);
  // Could not exec: dying is the next safest thing (systemd restarts us).
  log::Error("cannot re-execute gantryd; exiting",
             {{"error", std::strerror(errno)}});
  std::_Exit(1);
}

}  // namespace gantry::replication
