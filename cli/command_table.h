// How `gantry SUBCOMMAND` finds its code. Each command adds its subcommand
// and its options in its own file (AddQueueCommand in queue_command.cc,
// ...) and says what runs once it is the one parsed; main.cc only lists
// the commands, in the order --help shows them, and runs the parsed one.
//
// Not thread-safe: built and used by main before any thread starts.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace gantry::cli {

// Runs a parsed subcommand against gantryd at `controller` (empty: the
// default address) and returns the process's exit code.
using CommandRunner = std::function<int(const std::string& controller)>;

class CommandTable {
 public:
  explicit CommandTable(CLI::App& app) : app_(app) {}
  CommandTable(const CommandTable&) = delete;
  CommandTable& operator=(const CommandTable&) = delete;

  // Where a command adds its subcommand and options.
  CLI::App& app() { return app_; }

  // `run` runs when `subcommand` (from app()) is the one parsed. What it
  // needs from the options lives in what it captures (a shared_ptr the
  // options write into), so the table owns it.
  void Add(CLI::App* subcommand, CommandRunner run) {
    commands_.emplace_back(subcommand, std::move(run));
  }

  // The exit code of the parsed subcommand; nullopt when none was.
  std::optional<int> RunParsed(const std::string& controller) const {
    for (const auto& [subcommand, run] : commands_) {
      if (subcommand->parsed()) return run(controller);
    }
    return std::nullopt;
  }

 private:
  CLI::App& app_;
  std::vector<std::pair<CLI::App*, CommandRunner>> commands_;
};

}  // namespace gantry::cli
