// Refusing --gres=gpu:TYPE:N that no node of the partition could match:
// the census of nodes and its message, and when a node's types may still
// change after a controller start.

#include "daemon/controller/core/gpu_type_census.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/unit/support/status_message.h"

namespace gantry {
namespace gpu_type_census_test {

NodeSnapshot Node(std::vector<std::string> partitions,
                  std::vector<std::string> models,
                  std::vector<std::string> types) {
  NodeSnapshot node;
  node.partitions = std::move(partitions);
  node.cpus_total = 64;
  node.gpus_total = 8;
  node.gpu_models = std::move(models);
  node.gpu_types = std::move(types);
  return node;
}

PendingJob Job(const std::string& partition, const std::string& type) {
  PendingJob job;
  job.partition = partition;
  job.gpu_type = type;
  job.gpus_per_node = 1;
  return job;
}

using testing::Message;

TEST_CASE("a type no node of the partition has is refused, naming those") {
  const NodeSnapshot h100 = Node({"gpu"}, {"nvidia h100 80gb hbm3"}, {"h100"});
  const NodeSnapshot v100 =
      Node({"gpu", "old"}, {"tesla v100-sxm2-16gb"}, {"v100"});
  const NodeSnapshot a100 = Node({"big"}, {"ga100 [a100 sxm4 40gb]"}, {"a100"});
  const NodeSnapshot cpu = Node({"gpu", "cpu"}, {}, {});

  const PendingJob wants_a100 = Job("gpu", "a100");
  GpuTypeCensus census(wants_a100);
  CHECK_FALSE(census.Add(h100, false));
  CHECK_FALSE(census.Add(v100, false));
  CHECK_FALSE(census.Add(a100, false));
  CHECK_FALSE(census.Add(cpu, false));
  const absl::Status refused = census.Verdict();
  CHECK(refused.code() == absl::StatusCode::kInvalidArgument);
  CHECK(Message(refused) ==
        "no node in partition gpu has GPU type a100 (GPU types there: h100, "
        "v100; partition big has a100)");

  GpuTypeCensus h100_census(Job("gpu", "h100"));
  CHECK(h100_census.Add(h100, false));
  CHECK_FALSE(h100_census.Add(v100, false));
  CHECK(h100_census.Verdict().ok());

  // A partition without GPUs says so.
  const PendingJob from_cpu = Job("cpu", "a100");
  GpuTypeCensus cpu_census(from_cpu);
  cpu_census.Add(cpu, false);
  cpu_census.Add(a100, false);
  CHECK(Message(cpu_census.Verdict()) ==
        "no node in partition cpu has GPU type a100 (its nodes have no GPUs; "
        "partition big has a100)");
}

TEST_CASE("nothing is judged without a type or before any node is known") {
  const NodeSnapshot h100 = Node({"gpu"}, {"nvidia h100 80gb hbm3"}, {"h100"});
  const PendingJob untyped = Job("gpu", "");
  GpuTypeCensus any(untyped);
  CHECK(any.Add(h100, false));
  CHECK(any.Verdict().ok());
  const PendingJob typed = Job("gpu", "a100");
  GpuTypeCensus empty(typed);
  CHECK(empty.Verdict().ok());
  // Nodes of other partitions only: the job's partition has none yet.
  GpuTypeCensus elsewhere(typed);
  elsewhere.Add(Node({"other"}, {"nvidia a10"}, {"a10"}), false);
  CHECK(elsewhere.Verdict().ok());
}

TEST_CASE("features, unnamed GPUs, spares and types that may change") {
  const PendingJob job = Job("gpu", "a100");
  SECTION("a feature of the type's name is the type") {
    NodeSnapshot node = Node({"gpu"}, {"pci 10de:20b0"}, {});
    node.features = {"A100"};
    GpuTypeCensus census(job);
    CHECK(census.Add(node, false));
    CHECK(census.Verdict().ok());
  }
  SECTION("GPUs nothing named are listed as such") {
    GpuTypeCensus census(job);
    census.Add(Node({"gpu"}, {"pci 10de:20b0"}, {}), false);
    census.Add(Node({"gpu"}, {"nvidia h100 80gb hbm3"}, {"h100"}), false);
    CHECK(Message(census.Verdict()) ==
          "no node in partition gpu has GPU type a100 (GPU types there: h100, "
          "PCI 10de:20b0 (unnamed: no pci.ids entry on its agent))");
  }
  SECTION("an unnamed node that may still be named could be the type") {
    GpuTypeCensus census(job);
    CHECK(census.Add(Node({"gpu"}, {"pci 10de:20b0"}, {}), true));
    CHECK(census.Verdict().ok());
  }
  SECTION("hot spares serve restarts only, and the message says so") {
    NodeSnapshot spare = Node({"gpu"}, {"nvidia a100-sxm4-80gb"}, {"a100"});
    spare.hot_spare = true;
    GpuTypeCensus census(job);
    CHECK_FALSE(census.Add(spare, false));
    census.Add(Node({"gpu"}, {"nvidia h100 80gb hbm3"}, {"h100"}), false);
    CHECK(Message(census.Verdict()) ==
          "no node in partition gpu has GPU type a100 (GPU types there: h100; "
          "its 1 node(s) with a100 are hot spares, kept for restarts)");
  }
}

TEST_CASE("a stored node's unnamed GPUs may change only until it registers") {
  v1::NodeRecord record;
  record.mutable_inventory()->add_gpus()->set_model("PCI 10de:20b0");
  record.set_registered_time_ms(1'000);
  const int64_t started = 5'000, grace = 30'000;
  CHECK(GpuTypesMayChange(record, started, 6'000, grace));
  // The grace is over: the record is what the cluster is.
  CHECK_FALSE(GpuTypesMayChange(record, started, started + grace, grace));
  // Its agent registered since the start: its names are current.
  record.set_registered_time_ms(started + 10);
  CHECK_FALSE(GpuTypesMayChange(record, started, 6'000, grace));
  // Named GPUs are known whenever they were stored.
  record.set_registered_time_ms(1'000);
  record.mutable_inventory()->mutable_gpus(0)->set_model(
      "GA100 [A100 SXM4 40GB]");
  CHECK_FALSE(GpuTypesMayChange(record, started, 6'000, grace));
}

}  // namespace gpu_type_census_test
}  // namespace gantry
