// An agent stream the controller may send to, for component tests where
// what the agents are sent is not the subject: nothing is kept.
#pragma once

#include <string>

#include "daemon/controller/core/agent_link.h"

namespace gantry {

class SilentLink : public AgentLink {
 public:
  void Send(const v1::ControllerMessage&) override {}
  void Close() override {}
  void Close(const absl::Status&) override {}
  std::string Peer() const override { return "silent"; }
};

}  // namespace gantry
