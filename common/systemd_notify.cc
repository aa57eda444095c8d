#include "common/systemd_notify.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <string>

namespace gantry::systemd {
namespace {

// STATUS= is one line: a newline would start another assignment.
std::string StatusLine(std::string_view status) {
  std::string line = "STATUS=";
  for (char c : status) line.push_back(c == '\n' ? ' ' : c);
  return line;
}

void Send(const std::string& state) {
  // Failures are ignored on purpose: a daemon must run the same whether or
  // not anyone listens, and systemd notices a missing READY=1 by itself.
  sd_notify(/*unset_environment=*/0, state.c_str());
}

}  // namespace

void NotifyReady(std::string_view status) {
  Send("READY=1\n" + StatusLine(status));
}

void NotifyStatus(std::string_view status) { Send(StatusLine(status)); }

void NotifyStopping(std::string_view status) {
  Send("STOPPING=1\n" + StatusLine(status));
}

void NotifyWatchdog() { Send("WATCHDOG=1"); }

std::chrono::microseconds WatchdogPingInterval() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) <= 0 || usec == 0) {
    return std::chrono::microseconds(0);
  }
  return std::chrono::microseconds(usec / 2);
}

}  // namespace gantry::systemd
