// gantry-sim's failure model: seeded rates give the expected counts, a
// leaf failure takes exactly one whole leaf, kinds follow the mix, and the
// Llama 3 figures are the published ones.
#include <catch2/catch.hpp>
#include <map>

#include "daemon/simulator/failure_model.h"

namespace gantry::sim {
namespace failure_model_test {

// Events from `source` before `hours`.
std::vector<FailureEvent> Until(FailureSource& source, double hours) {
  std::vector<FailureEvent> events;
  for (;;) {
    FailureEvent e = source.Next();
    if (e.time_ms >= static_cast<int64_t>(hours * 3.6e6)) return events;
    events.push_back(std::move(e));
  }
}

ClusterShape Shape(uint32_t nodes, uint32_t per_leaf) {
  ClusterShape shape;
  shape.nodes = nodes;
  shape.nodes_per_leaf = per_leaf;
  return shape;
}

TEST_CASE("The Llama 3 figures are the paper's") {
  // 419 interruptions in 54 days on 2,048 nodes.
  CHECK(kLlama3NodeRatePerHour * 2048 * 54 * 24 == Approx(419));
  const std::vector<FailureKind> mix = Llama3FailureMix();
  double total = 0, software = 0, hang = 0;
  for (const FailureKind& kind : mix) {
    total += kind.weight;
    if (kind.fault == FaultClass::kSoftware) software += kind.weight;
    if (kind.fault == FaultClass::kHang) hang += kind.weight;
  }
  CHECK(total == 418);
  CHECK(mix.front().name == "faulty GPU");
  CHECK(mix.front().weight == 148);
  CHECK(software == 56);  // software bug 54, dependency 2
  CHECK(hang == 7);       // NCCL watchdog timeouts
}

TEST_CASE("Node failures come at the model's rate") {
  FailureModel model;
  model.node_rate_per_hour = 1e-3;
  model.seed = 7;
  ModelFailureSource source(model, Shape(1000, 8), 0);
  // 1e-3 x 1,000 nodes x 100,000 h = 100,000 expected; the standard
  // deviation is 316, so 1% is over 3 of them.
  const std::vector<FailureEvent> events = Until(source, 100000);
  CHECK(static_cast<double>(events.size()) == Approx(100000).epsilon(0.01));
  std::vector<int> per_node(1000);
  for (const FailureEvent& e : events) {
    REQUIRE(e.nodes.size() == 1);
    REQUIRE(e.nodes[0] < 1000);
    CHECK_FALSE(e.correlated);
    ++per_node[e.nodes[0]];
  }
  // Spread evenly: every node near its 100.
  for (int count : per_node) {
    CHECK(count > 50);
    CHECK(count < 160);
  }
}

TEST_CASE("At Llama 3's rate, 2,048 nodes see about 419 failures in 54 days") {
  FailureModel model;  // the defaults
  int total = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    model.seed = seed;
    ModelFailureSource source(model, Shape(2048, 8), 0);
    total += static_cast<int>(Until(source, 54 * 24).size());
  }
  // 20 runs: 8,380 expected, standard deviation 92.
  CHECK(total / 20.0 == Approx(419).epsilon(0.03));
}

TEST_CASE("A leaf failure takes every node of one leaf at once") {
  FailureModel model;
  model.node_rate_per_hour = 0;
  model.leaf_rate_per_hour = 0.01;
  ModelFailureSource source(model, Shape(64, 8), 0);
  // 0.01 x 8 leaves x 10,000 h = 800 expected (sd 28).
  const std::vector<FailureEvent> events = Until(source, 10000);
  CHECK(static_cast<double>(events.size()) == Approx(800).epsilon(0.12));
  std::map<uint32_t, int> per_leaf;
  for (const FailureEvent& e : events) {
    CHECK(e.correlated);
    CHECK(e.kind == "leaf switch");
    CHECK(e.fault == FaultClass::kHardware);
    REQUIRE(e.nodes.size() == 8);
    CHECK(e.nodes[0] % 8 == 0);
    for (std::size_t i = 1; i < e.nodes.size(); ++i) {
      CHECK(e.nodes[i] == e.nodes[0] + i);
    }
    ++per_leaf[e.nodes[0] / 8];
  }
  CHECK(per_leaf.size() == 8);
}

TEST_CASE("A last, partial leaf fails with the nodes it has") {
  FailureModel model;
  model.node_rate_per_hour = 0;
  model.leaf_rate_per_hour = 1;
  ModelFailureSource source(model, Shape(10, 8), 0);  // leaves of 8 and 2
  bool saw_partial = false;
  for (const FailureEvent& e : Until(source, 100)) {
    if (e.nodes.front() == 8) {
      CHECK(e.nodes == std::vector<uint32_t>{8, 9});
      saw_partial = true;
    } else {
      CHECK(e.nodes.size() == 8);
    }
  }
  CHECK(saw_partial);
}

TEST_CASE("Kinds follow the mix") {
  FailureModel model;
  model.node_rate_per_hour = 1;
  ModelFailureSource source(model, Shape(100, 8), 0);
  std::map<std::string, int> kinds;
  int software = 0;
  const std::vector<FailureEvent> events = Until(source, 1000);  // ~100,000
  for (const FailureEvent& e : events) {
    ++kinds[e.kind];
    if (e.fault == FaultClass::kSoftware) ++software;
  }
  const double n = static_cast<double>(events.size());
  CHECK(kinds["faulty GPU"] / n == Approx(148.0 / 418).margin(0.005));
  CHECK(kinds["GPU HBM3 memory"] / n == Approx(72.0 / 418).margin(0.005));
  CHECK(kinds["network switch/cable"] / n == Approx(35.0 / 418).margin(0.004));
  CHECK(software / n == Approx(56.0 / 418).margin(0.005));
  CHECK(kinds.size() == Llama3FailureMix().size());
}

TEST_CASE("The same seed gives the same failures, another seed others") {
  FailureModel model;
  model.node_rate_per_hour = 0.01;
  model.leaf_rate_per_hour = 0.01;
  auto draw = [&](uint64_t seed) {
    model.seed = seed;
    ModelFailureSource source(model, Shape(64, 8), 5000);
    std::vector<std::pair<int64_t, std::vector<uint32_t>>> out;
    for (const FailureEvent& e : Until(source, 1000)) {
      CHECK(e.time_ms >= 5000);
      out.emplace_back(e.time_ms, e.nodes);
    }
    return out;
  };
  CHECK(draw(3) == draw(3));
  CHECK(draw(3) != draw(4));
}

TEST_CASE("No rate, no failures, and a list replays in time order") {
  FailureModel model;
  model.node_rate_per_hour = 0;
  ModelFailureSource none(model, Shape(8, 8), 0);
  CHECK(none.Next().time_ms == INT64_MAX);

  FailureEvent late, early;
  late.time_ms = 20;
  early.time_ms = 10;
  ListFailureSource list({late, early});
  CHECK(list.Next().time_ms == 10);
  CHECK(list.Next().time_ms == 20);
  CHECK(list.Next().time_ms == INT64_MAX);
}

TEST_CASE("A bad model is refused") {
  FailureModel model;
  model.node_rate_per_hour = -1;
  CHECK(ValidateFailureModel(model).code() ==
        absl::StatusCode::kInvalidArgument);
  model.node_rate_per_hour = 1;
  model.mix = {{"x", 0, FaultClass::kHardware}};
  CHECK(ValidateFailureModel(model).code() ==
        absl::StatusCode::kInvalidArgument);
  model.mix = {{"x", -1, FaultClass::kHardware}};
  CHECK_FALSE(ValidateFailureModel(model).ok());
  model.mix = Llama3FailureMix();
  CHECK(ValidateFailureModel(model).ok());
}

}  // namespace failure_model_test
}  // namespace gantry::sim
