// Nodes not heard from in time: a late node is marked down and the others
// are left be; most nodes late at once get the reconnect grace (this
// controller is likelier cut off); a stalled loop moves every deadline by
// the stall before judging anyone.
#include "daemon/controller/core/node_silence.h"

#include <string>

#include <catch2/catch.hpp>

#include "tests/unit/support/core_parts_harness.h"

namespace gantry {
namespace node_silence_test {

constexpr int64_t kTickMs = 250;

struct Harness {
  Harness() {
    core.options.node_timeout_ms = 10'000;
    core.options.reconnect_grace_ms = 60'000;
    for (const char* name : {"n1", "n2", "n3", "n4"}) {
      core.AddNode(name).deadline_ms = Monotonic() + 10'000;
    }
    silence.Start();
  }
  int64_t Monotonic() const { return MonotonicMs(core.clock); }
  // Moves the clock a tick at a time (no stall) and checks at each.
  void RunTicksFor(int64_t ms) {
    for (int64_t passed = 0; passed < ms; passed += kTickMs) {
      core.clock.AdvanceMs(kTickMs);
      silence.Check();
    }
  }
  v1::NodeState StateOf(const std::string& name) const {
    return core.state.nodes.at(name).record.state();
  }

  CoreParts core;
  JobLifecycle lifecycle{
      core.LifecycleParts(),
      {.end_open_steps = [](JobRuntime&, const std::string&) {}}};
  NodeAdministration nodes{core.NodeAdministrationParts(lifecycle)};
  NodeSilence silence{{.clock = core.clock,
                       .options = core.options,
                       .state = core.state,
                       .nodes = nodes,
                       .allocation_liveness = core.allocation_liveness,
                       .tick_interval_ms = kTickMs}};
};

TEST_CASE("A node past its deadline is marked down, the others are not",
          "[node_silence]") {
  Harness harness;
  // The others keep being heard from; n1 is not.
  for (const char* name : {"n2", "n3", "n4"}) {
    harness.core.state.nodes.at(name).deadline_ms =
        harness.Monotonic() + 60'000;
  }
  harness.RunTicksFor(9'000);
  CHECK(harness.StateOf("n1") == v1::NODE_UP);
  harness.RunTicksFor(1'500);
  CHECK(harness.StateOf("n1") == v1::NODE_DOWN);
  CHECK(harness.core.state.nodes.at("n1").record.reason() ==
        "heartbeats stopped");
  for (const char* name : {"n2", "n3", "n4"}) {
    CHECK(harness.StateOf(name) == v1::NODE_UP);
  }
}

TEST_CASE("Most nodes silent at once get the reconnect grace",
          "[node_silence]") {
  Harness harness;
  harness.core.state.nodes.at("n4").deadline_ms = harness.Monotonic() + 600'000;
  harness.RunTicksFor(11'000);
  for (const char* name : {"n1", "n2", "n3"}) {
    CHECK(harness.StateOf(name) == v1::NODE_UP);
  }
  // The grace counts from the first falling silent (at 10 s).
  harness.RunTicksFor(58'000);
  CHECK(harness.StateOf("n1") == v1::NODE_UP);
  harness.RunTicksFor(2'000);
  for (const char* name : {"n1", "n2", "n3"}) {
    CHECK(harness.StateOf(name) == v1::NODE_DOWN);
  }
  CHECK(harness.StateOf("n4") == v1::NODE_UP);
}

TEST_CASE("A stalled loop moves every deadline by the stall",
          "[node_silence]") {
  Harness harness;
  const int64_t before = harness.core.state.nodes.at("n1").deadline_ms;
  // Thirty seconds without a tick: past every deadline, but the agents
  // were not listened to, so that time is given back.
  harness.core.clock.AdvanceMs(30'000);
  harness.silence.Check();
  for (const char* name : {"n1", "n2", "n3", "n4"}) {
    CHECK(harness.StateOf(name) == v1::NODE_UP);
  }
  CHECK(harness.core.state.nodes.at("n1").deadline_ms ==
        before + 30'000 - kTickMs);
}

}  // namespace node_silence_test
}  // namespace gantry
