// One node's part of the pre-flight gang check (PreflightCheck in
// agent.proto), run by the agent before a job attempt's ranks start:
//   1. health: the node's health problems now (GPU gone, HCA port down);
//   2. TCP ring: send the check's bytes to the successor's listener over
//      the compute addresses and time them, and collect what the
//      predecessor sent through this node's listener;
//   3. gloo: when asked and python3 can import torch, an all-reduce across
//      the gang with PyTorch's gloo backend (rendezvous at the first
//      node);
//   4. the site's own command (for example nccl-tests' all_reduce_perf),
//      whose exit code decides and whose "Avg bus bandwidth" line, when
//      printed, is compared with the gang's.
// Every part shares the check's deadline; the result is one
// PreflightResult, whatever happened.
//
// Thread-safe: RunPreflightCheck shares nothing but the listener (itself
// thread-safe); a check runs on its own thread.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "agent/preflight/preflight_listener.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

struct PreflightNode {
  std::string node_name;
  PreflightListener* listener = nullptr;  // null: no TCP part possible
  // The node's health problems now; empty: healthy.
  std::function<std::vector<std::string>()> health_problems;
  // python3's path, or empty when python3 has no torch (the gloo part is
  // then skipped).
  std::string torch_python;
};

v1::PreflightResult RunPreflightCheck(const v1::PreflightCheck& check,
                                      const PreflightNode& node,
                                      const std::atomic<bool>& cancelled);

// The value of a "# Avg bus bandwidth    : 12.345" line (nccl-tests; GB/s),
// as MB/s; 0 when there is none.
double ParseBusBandwidthMbps(const std::string& output);

// python3 when torch is installed for it, else empty. Runs python3 (a
// few tens of milliseconds): call it once.
std::string FindTorchPython();

// The gloo all-reduce script the gang runs (RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT in its environment); prints "busbw_mbps <value>".
extern const char kGlooAllReduceScript[];

}  // namespace gantry::agent
