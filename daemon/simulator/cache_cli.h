// `gantry-sim cache`: datasets attached to a trace's jobs (dataset_model.h)
// and the bytes read from shared storage with placement that ignores the
// nodes' caches and with cache-aware placement (both --dataset-locality
// choices), beside the switch locality each keeps. Not thread-safe (owns
// the parsed flags).
#pragma once

#include <cstddef>
#include <string>

#include "CLI/CLI.hpp"
#include "daemon/simulator/simulation.h"

namespace gantry::sim {

struct CacheFlags {
  std::string trace_path;
  std::string format = "auto";
  std::size_t limit = 0;
  double start_s = 0, span_s = 0;
  std::string dataset_gb = "20-2000";  // MIN-MAX
  bool json = false;
  SimConfig config;
  DatasetModelConfig model;
};

// Adds the `cache` subcommand to `app`, parsing into `flags`.
CLI::App* AddCacheCommand(CLI::App& app, CacheFlags& flags);

// Runs it; prints the table (or JSON) on stdout, errors on stderr prefixed
// "gantry-sim: ". Returns the exit status.
int RunCacheCommand(CacheFlags& flags);

}  // namespace gantry::sim
