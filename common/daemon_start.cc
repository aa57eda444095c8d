#include "common/daemon_start.h"

#include <iostream>

#include "absl/synchronization/mutex.h"
#include "common/broken_pipe.h"
#include "common/crash_point.h"
#include "common/daemon_flags.h"
#include "common/log.h"

namespace gantry {

std::optional<int> BeginDaemon(std::string_view program,
                               std::span<const std::string_view> crash_points) {
  IgnoreBrokenPipes();
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Before the flags: GANTRY_CRASH_AT=list needs none.
  if (absl::Status armed = CheckCrashPointsArmed(crash_points); !armed.ok()) {
    std::cerr << program << ": " << armed.message() << "\n";
    return 2;
  }
  return std::nullopt;
}

sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

int WaitForStopSignal(const sigset_t& stop_signals) {
  int signal = 0;
  sigwait(&stop_signals, &signal);
  log::Info("stopping", {{"signal", signal}});
  return signal;
}

DaemonCommandLine::DaemonCommandLine(std::string program, std::string table,
                                     const std::string& description)
    : program_(std::move(program)),
      table_(std::move(table)),
      app_(description) {
  app_.set_version_flag("--version", program_ + " " GANTRY_VERSION);
  app_.add_option("--config", config_path_,
                  "TOML file whose [" + table_ +
                      "] table sets these flags by their long names (flags "
                      "win), e.g. /etc/gantry/gantry.toml; read only when "
                      "given");
}

std::optional<int> DaemonCommandLine::Parse(int argc, char** argv) {
  app_.add_option("--log-level", log_level_, "debug, info, warn or error")
      ->capture_default_str()
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  if (std::optional<int> exit_code =
          ParseDaemonFlags(app_, argc, argv, program_, table_)) {
    return exit_code;
  }
  log::Configure(program_, log::ParseLevel(log_level_, log::Level::kInfo));
  return std::nullopt;
}

}  // namespace gantry
