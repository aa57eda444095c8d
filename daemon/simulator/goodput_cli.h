// `gantry-sim goodput`: the flags of the failure-injection runs and their
// wiring (scenario, failure model, costs, policies) to the goodput engine.
// Not thread-safe (owns the parsed flags).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "daemon/simulator/failure_model.h"
#include "daemon/simulator/goodput_sim.h"

namespace gantry::sim {

struct GoodputFlags {
  std::string trace_path;  // empty: one long job
  std::string format = "auto";
  std::size_t limit = 0;
  double start_s = 0, span_s = 0;
  uint32_t job_gpus = 16384;
  double job_days = 54;
  double gpu_rate = -1;  // per GPU-hour; < 0: use the node rate
  std::string checkpoint_interval = "1800";  // seconds, or "auto"
  std::string memory_interval = "auto";      // seconds, or "auto"
  uint32_t spares = 16;
  double operator_delay_s = 1800;
  double preflight_s = 10;
  double preflight_catch = 0.9;
  double jit_save_s = 60;
  double jit_lost_s = 10;
  double kueue_backoff_s = 60;
  bool grow_at_once = false;
  bool json = false;
  std::vector<std::string> only;
  GoodputConfig config;
  FailureModel model;
};

// Adds the `goodput` subcommand to `app`, parsing into `flags`.
CLI::App* AddGoodputCommand(CLI::App& app, GoodputFlags& flags);

// Runs it; prints the table (or JSON) on stdout, errors on stderr prefixed
// "gantry-sim: ". Returns the exit status.
int RunGoodputCommand(GoodputFlags& flags);

}  // namespace gantry::sim
