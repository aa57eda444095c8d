// The controller's handle on one agent's stream. The gRPC reactor implements
// it; tests can implement it with an in-memory queue.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "gantry/v1/agent.pb.h"

namespace gantry {

class AgentLink {
 public:
  virtual ~AgentLink() = default;
  // Queues a message for the agent. Thread-safe; does nothing once the
  // stream has ended.
  virtual void Send(const v1::ControllerMessage& message) = 0;
  // Ends the stream from the controller's side (a newer registration of the
  // same node replaced it, or the node was declared down). Thread-safe.
  virtual void Close() = 0;
  // Ends the stream with `why` as its status, which the agent logs (a
  // refused registration, a protocol violation).
  virtual void Close(const absl::Status& why) = 0;
  // The peer's address, for logs.
  virtual std::string Peer() const = 0;
};

}  // namespace gantry
