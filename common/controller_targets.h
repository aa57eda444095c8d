// Several controllers (a replicated cluster, gantryd --etcd) as agents and
// the CLI are told of them: one gRPC target, or several separated by
// commas; and the gRPC trailing metadata key in which a standby gantryd
// names the leader's HOST:PORT (daemon/replication/standby_service.h), so
// callers redial the leader at once. Thread-safe (pure).
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

namespace gantry {

inline constexpr char kLeaderMetadataKey[] = "gantry-leader";

// "a:1, b:2" -> {"a:1", "b:2"}; a text with no comma is one target.
inline std::vector<std::string> SplitControllerTargets(
    const std::string& text) {
  std::vector<std::string> targets;
  for (absl::string_view one : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    absl::string_view trimmed = absl::StripAsciiWhitespace(one);
    if (!trimmed.empty()) targets.emplace_back(trimmed);
  }
  if (targets.empty()) targets.push_back(text);
  return targets;
}

// gRPC drives a channel's reconnection only while some thread polls it. A
// call on a channel in TRANSIENT_FAILURE fails at once without polling (and
// pick_first reports that state until a retry has connected), so a client
// that moves between controllers, calling each in turn, leaves the retries
// to gRPC's backup poller: every 5 s by default, which made a hand-over
// that took 50 ms cost clients 5 s. Call in main, before the first channel
// is made; a value already in the environment wins.
inline void PollReconnectsOften() {
  setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "100",
         /*overwrite=*/0);
}

}  // namespace gantry
