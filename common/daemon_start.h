// The start-up gantryd and gantry-agent share, so the two daemons cannot
// drift apart in it: what runs before any flag is read (BeginDaemon), and
// the command line's common part (DaemonCommandLine: --version, --config
// naming the daemon's table of gantry.toml, --log-level, then the file and
// the flags parsed and logging configured).
//
// Not thread-safe: called from main before any thread starts.
#pragma once

#include <signal.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace gantry {

// Broken pipes ignored (a log line may be written at once), abseil's mutex
// deadlock detection turned off (Debian builds it on; it kept a graph of
// every lock gRPC takes, about a third of the CPU of a controller with
// thousands of agent streams, for a check meant for debug builds), and
// GANTRY_CRASH_AT checked against the daemon's crash points
// (common/crash_point.h). Returns the exit code (2, the error printed as
// "PROGRAM: ...") when the daemon must not start, else nullopt.
std::optional<int> BeginDaemon(std::string_view program,
                               std::span<const std::string_view> crash_points);

// Blocks SIGINT and SIGTERM in the calling thread, so that every thread it
// starts afterwards (gRPC's included) inherits the mask and the signals wait
// for WaitForStopSignal. Call from main before starting any thread.
sigset_t BlockStopSignals();

// Waits for SIGINT or SIGTERM (blocked by BlockStopSignals), logs
// "stopping" with it, and returns it.
int WaitForStopSignal(const sigset_t& stop_signals);

class DaemonCommandLine {
 public:
  // `table`: the daemon's table of gantry.toml ("controller", "agent");
  // `description`: the first line of --help.
  DaemonCommandLine(std::string program, std::string table,
                    const std::string& description);

  // Where the daemon adds its own options, before Parse.
  CLI::App& app() { return app_; }

  // Adds --log-level (after the daemon's own options, so --help lists it
  // last), reads the --config file's table and then the command line
  // (common/daemon_flags.h: flags win), and configures logging. Returns the
  // exit code to end the program with (0 after --help, --version or a good
  // --check-config; 2 after an error), or nullopt to carry on.
  std::optional<int> Parse(int argc, char** argv);

 private:
  std::string program_;
  std::string table_;
  CLI::App app_;
  std::string config_path_;
  std::string log_level_ = "info";
};

}  // namespace gantry
