#include "daemon/rpc/admission_gate.h"

#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace gantry {
namespace admission_gate_test {

TEST_CASE("the gate admits up to its limit and again after leaving",
          "[admission_gate]") {
  AdmissionGate gate(2);
  CHECK(gate.TryEnter());
  CHECK(gate.TryEnter());
  CHECK_FALSE(gate.TryEnter());
  CHECK(gate.in_flight() == 2);
  gate.Leave();
  CHECK(gate.TryEnter());
  CHECK_FALSE(gate.TryEnter());
}

TEST_CASE("many threads never pass more than the limit", "[admission_gate]") {
  AdmissionGate gate(100);
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (gate.TryEnter()) admitted.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(admitted.load() == 100);
  CHECK(gate.in_flight() == 100);
}

}  // namespace admission_gate_test
}  // namespace gantry
