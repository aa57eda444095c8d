#include "agent/simulated/simulated_preflight.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gantry::agent {
namespace {

double SpeedOf(const SimulatedPreflightPlan& plan, const std::string& node) {
  auto it = plan.find(node);
  if (it == plan.end() ||
      it->second.kind != SimulatedPreflightBehavior::Kind::kSlow) {
    return kSimulatedLinkMbps;
  }
  return kSimulatedLinkMbps / 10;
}

bool Silent(const SimulatedPreflightPlan& plan, const std::string& node) {
  auto it = plan.find(node);
  return it != plan.end() &&
         it->second.kind == SimulatedPreflightBehavior::Kind::kSilent;
}

}  // namespace

absl::StatusOr<SimulatedPreflightPlan> ParseSimulatedPreflightPlan(
    const std::string& text) {
  SimulatedPreflightPlan plan;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> words =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    SimulatedPreflightBehavior behavior;
    if (words.size() >= 2 && words[1] == "fail") {
      behavior.kind = SimulatedPreflightBehavior::Kind::kFail;
      behavior.why = words.size() > 2
                         ? absl::StrJoin(words.begin() + 2, words.end(), " ")
                         : "simulated failure";
    } else if (words.size() == 2 && words[1] == "slow") {
      behavior.kind = SimulatedPreflightBehavior::Kind::kSlow;
    } else if (words.size() == 2 && words[1] == "silent") {
      behavior.kind = SimulatedPreflightBehavior::Kind::kSilent;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "simulated pre-flight plan line ", number,
          ": expected NAME fail [WHY], NAME slow or NAME silent, got '", line,
          "'"));
    }
    plan[words[0]] = std::move(behavior);
  }
  return plan;
}

std::optional<v1::PreflightResult> SimulatePreflight(
    const v1::PreflightCheck& check, const std::string& node,
    const SimulatedPreflightPlan& plan, uint32_t elapsed_ms) {
  if (Silent(plan, node)) return std::nullopt;
  v1::PreflightResult result;
  result.set_job_id(check.job_id());
  result.set_attempt(check.attempt());
  result.set_passed(true);
  result.set_elapsed_ms(elapsed_ms);
  auto own = plan.find(node);
  if (own != plan.end() &&
      own->second.kind == SimulatedPreflightBehavior::Kind::kFail) {
    result.set_passed(false);
    result.set_problem(own->second.why);
  }
  const int n = check.peers_size();
  if (n < 2) return result;
  const std::string& next = check.peers((check.index() + 1) % n).node();
  const std::string& previous = check.peers((check.index() + n - 1) % n).node();
  const double speed = SpeedOf(plan, node);
  if (Silent(plan, next)) {
    result.set_send_problem("connect to " + next + ": timed out");
  } else {
    result.set_send_mbps(std::min(speed, SpeedOf(plan, next)));
    result.set_round_trip_us(20);
  }
  if (Silent(plan, previous)) {
    result.set_receive_problem("nothing arrived from " + previous + " in time");
  } else {
    result.set_receive_mbps(std::min(speed, SpeedOf(plan, previous)));
  }
  return result;
}

}  // namespace gantry::agent
