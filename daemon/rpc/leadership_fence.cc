#include "daemon/rpc/leadership_fence.h"

#include <utility>

namespace gantry {
namespace {

// Written once, before any gRPC thread runs.
std::function<bool()>& Fence() {
  static std::function<bool()> fence;
  return fence;
}

}  // namespace

void SetLeadershipFence(std::function<bool()> held) {
  Fence() = std::move(held);
}

bool LeadershipHeld() {
  const std::function<bool()>& fence = Fence();
  return !fence || fence();
}

}  // namespace gantry
