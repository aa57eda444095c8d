// The ranks of one simulated node (gantry-fleet): no process is
// forked; a rank "runs" for a planned time and then "exits" with a planned
// code, and a kill ends it as a signal would end a process. The outcomes are
// the same RankOutcome a real rank's reaper reports, so the node sends the
// controller the same rank events.
//
// The plan comes from the job's environment (the rank's own variables win),
// else from the agent's defaults:
//   GANTRY_SIMULATED_SECONDS    how long each rank runs (decimal, >= 0;
//                               "inf": until killed)
//   GANTRY_SIMULATED_EXIT_CODE  the code it exits with (0-255)
//
// Pure: time is passed in (milliseconds on any monotonic clock), nothing is
// read from the system. Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/launch/rank_launcher.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

inline constexpr char kSimulatedSecondsVariable[] = "GANTRY_SIMULATED_SECONDS";
inline constexpr char kSimulatedExitCodeVariable[] =
    "GANTRY_SIMULATED_EXIT_CODE";
// A rank that runs until it is killed.
inline constexpr int64_t kRunsForever = std::numeric_limits<int64_t>::max();

struct SimulatedRankPlan {
  int64_t duration_ms = 0;  // kRunsForever: until killed
  int exit_code = 0;
};

// The plan of one rank: `rank_environment` over `job_environment` over
// `defaults`. INVALID_ARGUMENT naming the variable for a value that is not
// a number of seconds >= 0 (or "inf") or an exit code 0-255.
absl::StatusOr<SimulatedRankPlan> PlanSimulatedRank(
    const google::protobuf::Map<std::string, std::string>& job_environment,
    const google::protobuf::Map<std::string, std::string>& rank_environment,
    const SimulatedRankPlan& defaults);

// Parses a GANTRY_SIMULATED_SECONDS value.
absl::StatusOr<int64_t> ParseSimulatedDurationMs(const std::string& text);
// Seconds (>= 0) as a duration; infinite or absurdly long: kRunsForever.
int64_t SimulatedDurationMs(double seconds);

// Whether `signal` ends a process that does not handle it (the default
// action is to terminate or dump core), as a job script would be ended.
// False for 0, for signals ignored by default (SIGCHLD, SIGCONT, SIGURG,
// SIGWINCH) and for the stop signals.
bool SignalEndsProcess(int signal);

struct SimulatedRankEnd {
  v1::RankId rank;
  RankOutcome outcome;
};

class SimulatedRanks {
 public:
  explicit SimulatedRanks(SimulatedRankPlan defaults) : defaults_(defaults) {}

  struct LaunchResult {
    std::vector<v1::RankId> started;
    // When any rank's plan is bad, no rank of the launch starts and every
    // one is here with launch_failed and the reason (as a real launch that
    // cannot start leaves nothing running).
    std::vector<SimulatedRankEnd> failed;
  };
  // Starts the ranks of `launch` at `now_ms`. A rank already running (the
  // same job, attempt and rank: a repeated launch) is left as it is.
  LaunchResult Launch(const v1::LaunchRanks& launch, int64_t now_ms);

  // As RankLauncher::Kill: `signal` (<= 0: SIGTERM) to every rank of the
  // job attempt (attempt 0: any). Ranks the signal ends are returned, ended
  // now; the others get SIGKILL `grace_seconds` later unless `escalate` is
  // false.
  std::vector<SimulatedRankEnd> Kill(uint64_t job_id, uint32_t attempt,
                                     int signal, uint32_t grace_seconds,
                                     bool escalate, int64_t now_ms);

  // The ranks whose end has come by `now_ms`, removed.
  std::vector<SimulatedRankEnd> TakeDue(int64_t now_ms);
  // When TakeDue next has something; kRunsForever when never.
  int64_t NextDueMs() const;

  std::vector<v1::RankId> Running() const;
  size_t size() const { return live_.size(); }

 private:
  using Key = std::tuple<uint64_t, uint32_t, uint32_t>;  // job, attempt, rank
  struct Live {
    int64_t end_ms = kRunsForever;
    int exit_code = 0;
    int signal = 0;  // non-zero: ends by this signal (a kill's escalation)
  };

  const SimulatedRankPlan defaults_;
  std::map<Key, Live> live_;
};

}  // namespace gantry::agent
