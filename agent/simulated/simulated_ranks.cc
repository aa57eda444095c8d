#include "agent/simulated/simulated_ranks.h"

#include <algorithm>
#include <cmath>
#include <csignal>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gantry::agent {
namespace {

// Beyond this a duration is as good as forever (about 30,000 years).
constexpr double kLongestMs = 1e15;

const std::string* Lookup(
    const google::protobuf::Map<std::string, std::string>& job,
    const google::protobuf::Map<std::string, std::string>& rank,
    const std::string& key) {
  auto own = rank.find(key);
  if (own != rank.end()) return &own->second;
  auto shared = job.find(key);
  if (shared != job.end()) return &shared->second;
  return nullptr;
}

}  // namespace

absl::StatusOr<int64_t> ParseSimulatedDurationMs(const std::string& text) {
  const std::string word =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  if (word == "inf" || word == "infinity") return kRunsForever;
  double seconds = 0;
  if (!absl::SimpleAtod(word, &seconds) || std::isnan(seconds) || seconds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a number of seconds >= 0 or inf"));
  }
  return SimulatedDurationMs(seconds);
}

int64_t SimulatedDurationMs(double seconds) {
  const double ms = std::round(std::max(0.0, seconds) * 1000);
  if (!(ms < kLongestMs)) return kRunsForever;
  return static_cast<int64_t>(ms);
}

absl::StatusOr<SimulatedRankPlan> PlanSimulatedRank(
    const google::protobuf::Map<std::string, std::string>& job_environment,
    const google::protobuf::Map<std::string, std::string>& rank_environment,
    const SimulatedRankPlan& defaults) {
  SimulatedRankPlan plan = defaults;
  if (const std::string* seconds = Lookup(job_environment, rank_environment,
                                          kSimulatedSecondsVariable)) {
    absl::StatusOr<int64_t> duration = ParseSimulatedDurationMs(*seconds);
    if (!duration.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          kSimulatedSecondsVariable, ": ", duration.status().message()));
    }
    plan.duration_ms = *duration;
  }
  if (const std::string* code = Lookup(job_environment, rank_environment,
                                       kSimulatedExitCodeVariable)) {
    int value = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*code), &value) ||
        value < 0 || value > 255) {
      return absl::InvalidArgumentError(
          absl::StrCat(kSimulatedExitCodeVariable, ": \"", *code,
                       "\" is not an exit code from 0 to 255"));
    }
    plan.exit_code = value;
  }
  return plan;
}

bool SignalEndsProcess(int signal) {
  switch (signal) {
    case 0:
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return false;
    default:
      return signal > 0 && signal <= SIGRTMAX;
  }
}

SimulatedRanks::LaunchResult SimulatedRanks::Launch(
    const v1::LaunchRanks& launch, int64_t now_ms) {
  LaunchResult result;
  std::vector<std::pair<Key, SimulatedRankPlan>> planned;
  for (const v1::RankLaunch& rank : launch.ranks()) {
    absl::StatusOr<SimulatedRankPlan> plan = PlanSimulatedRank(
        launch.job_environment(), rank.environment(), defaults_);
    if (!plan.ok()) {
      for (const v1::RankLaunch& each : launch.ranks()) {
        SimulatedRankEnd end;
        end.rank.set_job_id(launch.job_id());
        end.rank.set_attempt(launch.attempt());
        end.rank.set_rank(each.rank());
        end.outcome.launch_failed = true;
        end.outcome.message = std::string(plan.status().message());
        result.failed.push_back(std::move(end));
      }
      return result;
    }
    planned.push_back(
        {{launch.job_id(), launch.attempt(), rank.rank()}, *plan});
  }
  for (const auto& [key, plan] : planned) {
    Live live;
    live.end_ms = plan.duration_ms == kRunsForever ? kRunsForever
                                                   : now_ms + plan.duration_ms;
    live.exit_code = plan.exit_code;
    if (!live_.emplace(key, live).second) continue;
    v1::RankId& id = result.started.emplace_back();
    id.set_job_id(std::get<0>(key));
    id.set_attempt(std::get<1>(key));
    id.set_rank(std::get<2>(key));
  }
  return result;
}

std::vector<SimulatedRankEnd> SimulatedRanks::Kill(uint64_t job_id,
                                                   uint32_t attempt, int signal,
                                                   uint32_t grace_seconds,
                                                   bool escalate,
                                                   int64_t now_ms) {
  const int first_signal = signal > 0 ? signal : SIGTERM;
  const int64_t escalate_at = now_ms + int64_t{grace_seconds} * 1000;
  std::vector<SimulatedRankEnd> ended;
  for (auto it = live_.lower_bound({job_id, 0, 0});
       it != live_.end() && std::get<0>(it->first) == job_id;) {
    if (attempt != 0 && std::get<1>(it->first) != attempt) {
      ++it;
      continue;
    }
    if (SignalEndsProcess(first_signal)) {
      SimulatedRankEnd& end = ended.emplace_back();
      end.rank.set_job_id(job_id);
      end.rank.set_attempt(std::get<1>(it->first));
      end.rank.set_rank(std::get<2>(it->first));
      end.outcome.signal = first_signal;
      it = live_.erase(it);
      continue;
    }
    if (escalate && escalate_at < it->second.end_ms) {
      it->second.end_ms = escalate_at;
      it->second.signal = SIGKILL;
    }
    ++it;
  }
  return ended;
}

std::vector<SimulatedRankEnd> SimulatedRanks::TakeDue(int64_t now_ms) {
  std::vector<SimulatedRankEnd> ended;
  for (auto it = live_.begin(); it != live_.end();) {
    if (it->second.end_ms > now_ms) {
      ++it;
      continue;
    }
    SimulatedRankEnd& end = ended.emplace_back();
    end.rank.set_job_id(std::get<0>(it->first));
    end.rank.set_attempt(std::get<1>(it->first));
    end.rank.set_rank(std::get<2>(it->first));
    if (it->second.signal != 0) {
      end.outcome.signal = it->second.signal;
    } else {
      end.outcome.exit_code = it->second.exit_code;
    }
    it = live_.erase(it);
  }
  return ended;
}

int64_t SimulatedRanks::NextDueMs() const {
  int64_t next = kRunsForever;
  for (const auto& [key, live] : live_) next = std::min(next, live.end_ms);
  return next;
}

std::vector<v1::RankId> SimulatedRanks::Running() const {
  std::vector<v1::RankId> running;
  running.reserve(live_.size());
  for (const auto& [key, live] : live_) {
    v1::RankId& id = running.emplace_back();
    id.set_job_id(std::get<0>(key));
    id.set_attempt(std::get<1>(key));
    id.set_rank(std::get<2>(key));
  }
  return running;
}

}  // namespace gantry::agent
