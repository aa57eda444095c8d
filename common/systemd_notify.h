// Tells systemd how a daemon is doing (sd_notify(3)): READY=1 once it
// serves, STATUS= lines for `systemctl status`, STOPPING=1 when it shuts
// down, and WATCHDOG=1 pings from its main loop when the unit sets
// WatchdogSec=, so that systemd restarts a daemon whose loop is stuck.
//
// Every call is a no-op when the process was not started by systemd with
// Type=notify (no NOTIFY_SOCKET in the environment), so the daemons call
// these unconditionally. Thread-safe (each call sends one datagram).
#pragma once

#include <chrono>
#include <string_view>

namespace gantry::systemd {

// READY=1 with a STATUS= line: the daemon accepts work.
void NotifyReady(std::string_view status);
// A STATUS= line alone.
void NotifyStatus(std::string_view status);
// STOPPING=1 with a STATUS= line: the daemon began shutting down.
void NotifyStopping(std::string_view status);
// WATCHDOG=1: the main loop is alive.
void NotifyWatchdog();

// How often to send WATCHDOG=1: half of the unit's WatchdogSec= (from
// WATCHDOG_USEC, for this process), so one late ping is not fatal; zero
// when no watchdog is asked for.
std::chrono::microseconds WatchdogPingInterval();

}  // namespace gantry::systemd
