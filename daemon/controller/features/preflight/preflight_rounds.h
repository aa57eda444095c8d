// The controller's pre-flight gang checks in flight (docs/user-guide.md
// "Pre-flight"), in memory: which job attempts are being checked, on which
// nodes in ring order, until when, and what each node answered; plus the port
// each agent's pre-flight listener announced when it registered. The policy
// knobs (PreflightOptions) come from gantryd's flags.
//
// A check lost with a controller restart is run again: the attempt's
// record says its pre-flight began and never ended, and once every node
// of the allocation is back the restarted controller sends a new check
// (PreflightFeature::HoldsRanks).
//
// Not thread-safe: owned by the pre-flight feature, on the controller's
// loop.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gantry/v1/agent.pb.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

struct PreflightOptions {
  // Which jobs run it when they do not say (--preflight / --preflight=no).
  enum class Mode { kOff, kMultiNode, kAll };
  Mode mode = Mode::kOff;
  int64_t timeout_ms = 30'000;
  // A link or node below this times the gang's median is slow (0: only
  // failures count).
  double slow_factor = 0.5;
  uint64_t transfer_bytes = 4 << 20;
  std::string site_command;  // empty: none
  bool gloo = true;          // where python3 has torch
};

// "off", "multinode", "all"; nullopt for anything else.
std::optional<PreflightOptions::Mode> ParsePreflightMode(
    const std::string& text);

// Whether `spec`'s attempt with `nodes` nodes runs the check.
bool PreflightWanted(const PreflightOptions& options, const v1::JobSpec& spec,
                     int nodes);

class PreflightRounds {
 public:
  struct Round {
    uint32_t attempt = 0;
    std::vector<std::string> nodes;  // ring order
    // On the monotonic clock (MonotonicMs), as Overdue's now_ms.
    int64_t started_ms = 0;
    int64_t deadline_ms = 0;
    std::map<std::string, v1::PreflightResult> answers;
  };

  void NotePort(const std::string& node, uint32_t port) { ports_[node] = port; }
  uint32_t PortOf(const std::string& node) const;

  // A new random token for a check.
  std::string NewToken();

  Round& Begin(uint64_t job_id, Round round);
  Round* Find(uint64_t job_id, uint32_t attempt);
  void End(uint64_t job_id) { rounds_.erase(job_id); }
  // Jobs whose round is past its deadline at `now_ms`.
  std::vector<uint64_t> Overdue(int64_t now_ms) const;
  // Records a node's answer; true when every node of the round answered.
  bool Answer(Round& round, const std::string& node,
              const v1::PreflightResult& result);

 private:
  std::map<std::string, uint32_t> ports_;
  std::map<uint64_t, Round> rounds_;
  std::mt19937_64 random_{std::random_device{}()};
};

}  // namespace gantry
