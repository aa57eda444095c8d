#include "daemon/replication/step_down.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/log.h"

namespace gantry::replication {

void StepDown(char** argv, const std::string& reason) {
  static std::atomic<bool> stepping_down{false};
  if (stepping_down.exchange(true)) {
    // Said too, so that no reason to step down goes unlogged.
    log::Warn("also found this controller must step down (under way)",
              {{"reason", reason}});
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  log::Error("stepping down: starting over as a standby", {{"reason", reason}});
  execv("/proc/self/exe", argv);
  // Could not exec: dying is the next safest thing (systemd restarts us).
  log::Error("cannot re-execute gantryd; exiting",
             {{"error", std::strerror(errno)}});
  std::_Exit(1);
}

}  // namespace gantry::replication
