#include "daemon/scheduler/restart_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

constexpr int64_t kMaxBackoffMs = 60'000;

int64_t Backoff(int64_t base_ms, uint32_t restarts_used) {
  int64_t backoff = base_ms;
  for (uint32_t i = 0; i < restarts_used && backoff < kMaxBackoffMs; ++i) {
    backoff *= 2;
  }
  return std::min(backoff, kMaxBackoffMs);
}

std::string Status(int exit_code, int signal) {
  return signal != 0 ? absl::StrCat("signal ", signal)
                     : absl::StrCat("exit code ", exit_code);
}

}  // namespace

bool IsApplicationFailure(FailureKind kind) {
  return kind == FailureKind::kApplication || kind == FailureKind::kOutOfMemory;
}

RestartDecision DecideRestart(const RestartInput& input) {
  RestartDecision decision;
  if (input.kind == FailureKind::kTimeLimit ||
      input.kind == FailureKind::kCancelled) {
    return decision;
  }
  if (input.kind == FailureKind::kOwnCrash) {
    decision.restart = true;
    return decision;
  }
  const uint32_t restarts_used =
      input.attempts_started > 0 ? input.attempts_started - 1 : 0;
  // (A job that set --max-restarts=0 hears of its spent budget below.)
  if (IsApplicationFailure(input.kind) && !input.restarts_requested &&
      input.max_restarts > 0) {
    decision.repeated_app_failures = 1;
    decision.final_detail = absl::StrCat(
        input.kind == FailureKind::kOutOfMemory
            ? "ran out of memory"
            : absl::StrCat("failed with ",
                           Status(input.exit_code, input.signal)),
        " on a healthy node: not restarted (a job restarts after its own "
        "failures only when it asks, with --max-restarts N)");
    return decision;
  }
  if (IsApplicationFailure(input.kind)) {
    const bool same = input.repeated_app_failures > 0 &&
                      input.exit_code == input.previous_exit_code &&
                      input.signal == input.previous_signal;
    decision.repeated_app_failures = same ? input.repeated_app_failures + 1 : 1;
    if (decision.repeated_app_failures >= 2) {
      const bool oom = input.kind == FailureKind::kOutOfMemory;
      decision.final_detail = absl::StrCat(
          oom ? "ran out of memory"
              : absl::StrCat("failed with ",
                             Status(input.exit_code, input.signal)),
          " on ", decision.repeated_app_failures,
          " consecutive attempts with no node fault: an application error, "
          "not retried",
          oom ? " (resubmit with a larger --mem)" : "");
      return decision;
    }
  }
  if (restarts_used >= input.max_restarts) {
    decision.final_detail =
        absl::StrCat("restart budget of ", input.max_restarts,
                     " exhausted after ", input.attempts_started, " attempts");
    return decision;
  }
  decision.restart = true;
  if (IsApplicationFailure(input.kind)) {
    decision.backoff_ms = Backoff(input.backoff_base_ms, restarts_used);
  } else {
    decision.backoff_ms =
        restarts_used == 0 ? 0
                           : Backoff(input.backoff_base_ms, restarts_used - 1);
  }
  return decision;
}

}  // namespace gantry
