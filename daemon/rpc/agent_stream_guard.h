// The gate every message of an agent stream passes before it reaches the
// controller's loop: a stream that floods (more messages than its token
// bucket allows), sends a message over the size limit, bytes that are not
// an AgentMessage, or a message no sane agent sends (anything before its
// Register, a second Register, a kind this controller does not know, an
// inventory with absurd or inconsistent values, over-long fields) is cut.
// The controller then treats its node as any node whose stream broke; it
// may reconnect, and is cut again if it misbehaves again.
//
// What needs the controller's state (does this node hold the rank it
// reports on?) is checked on the loop (Controller::OnAgentMessage); what is
// here is pure and runs on the gRPC thread that read the message, so a
// flood costs the loop nothing.
//
// Not thread-safe: one guard per stream, used by that stream's reads,
// which gRPC never runs concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "gantry/v1/agent.pb.h"

namespace gantry {

// Tokens refill continuously at `rate_per_second` up to `burst`; each
// message takes one. Time is passed in (milliseconds of a monotonic clock),
// so tests drive it by hand.
class TokenBucket {
 public:
  TokenBucket(double rate_per_second, double burst, int64_t now_ms);
  // Takes a token if there is one.
  bool TryTake(int64_t now_ms);

 private:
  const double rate_per_ms_;
  const double burst_;
  double tokens_;
  int64_t last_ms_;
};

struct AgentStreamLimits {
  // Messages a second a stream may send on average, and in one burst.
  double messages_per_second = 100;
  double burst = 1000;
  // Serialized size of one message.
  size_t max_message_bytes = 1 << 20;
};

// The limits for a heartbeat every `heartbeat_interval_ms`: a stream may
// send `messages_per_heartbeat` messages per interval on average (its
// heartbeat, rank events, checkpoint reports) and ten times that at once
// (a node whose many ranks all start or exit together).
AgentStreamLimits AgentStreamLimitsFor(int64_t heartbeat_interval_ms,
                                       uint32_t messages_per_heartbeat,
                                       size_t max_message_bytes);

// Checks one AgentMessage on its own: its kind is known and its fields are
// within sane bounds. INVALID_ARGUMENT saying what is wrong, else OK.
absl::Status ValidateAgentMessage(const v1::AgentMessage& message);

class AgentStreamGuard {
 public:
  AgentStreamGuard(const AgentStreamLimits& limits, int64_t now_ms);

  // Before parsing: the stream's rate and the message's size.
  // RESOURCE_EXHAUSTED when either is over its limit.
  absl::Status Admit(size_t message_bytes, int64_t now_ms);
  // After parsing: the message itself and its place in the stream (the
  // first is a Register, no other is). INVALID_ARGUMENT when it is wrong.
  absl::Status Check(const v1::AgentMessage& message);

  // The node the stream registered as; empty before its Register.
  const std::string& node_name() const { return node_name_; }

 private:
  const AgentStreamLimits limits_;
  TokenBucket bucket_;
  std::string node_name_;
};

}  // namespace gantry
