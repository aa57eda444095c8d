// The flags by which gantry-sim's subcommands name a trace and the window
// of it to replay (--trace, --format, --limit, --start, --span), declared
// once so that they read the same everywhere. Header-only; not thread-safe
// (binds to the caller's variables).
#pragma once

#include <cstddef>
#include <string>

#include "CLI/CLI.hpp"

namespace gantry::sim {

inline void AddTraceWindowFlags(CLI::App* cmd, const char* trace_help,
                                std::string& trace_path, std::string& format,
                                std::size_t& limit, double& start_s,
                                double& span_s) {
  cmd->add_option("--trace", trace_path, trace_help);
  cmd->add_option("--format", format,
                  "auto, philly, tiresias, alibaba2020, alibaba2023 or acme")
      ->capture_default_str();
  cmd->add_option("--limit", limit, "First N jobs of the window (0: all)")
      ->capture_default_str();
  cmd->add_option("--start", start_s, "Window start (s after first submit)");
  cmd->add_option("--span", span_s, "Window length in s (0: to the end)");
}

}  // namespace gantry::sim
