// sinfo's views: state words, the partition summary and -o formats.
#include "cli/slurm/sinfo_format.h"

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace sinfo_format_test {

v1::NodeRecord Node(const std::string& name, uint32_t cpus_allocated,
                    const std::vector<std::string>& features) {
  v1::NodeRecord node;
  node.set_name(name);
  node.set_address("10.0.0." + name.substr(name.size() - 1));
  node.set_state(v1::NODE_UP);
  node.add_partitions("gpu");
  node.mutable_inventory()->set_cpus(64);
  node.mutable_inventory()->set_memory_mb(512000);
  for (int i = 0; i < 8; ++i) node.mutable_inventory()->add_gpus();
  node.set_cpus_allocated(cpus_allocated);
  for (const std::string& feature : features) node.add_features(feature);
  return node;
}

std::vector<v1::PartitionInfo> Partitions() {
  v1::PartitionInfo gpu;
  gpu.set_name("gpu");
  gpu.set_is_default(true);
  gpu.set_max_time_seconds(2 * 86400);
  return {gpu};
}

TEST_CASE("sinfo -o groups nodes whose fields print the same",
          "[sinfo_format]") {
  const std::vector<v1::NodeRecord> nodes = {
      Node("n1", 0, {"a100", "ib"}), Node("n2", 0, {"a100", "ib"}),
      Node("n3", 16, {"a100", "ib"}), Node("n4", 0, {"h100"})};
  absl::StatusOr<SinfoFormat> format =
      SinfoFormat::Parse("%P %.3D %t %f %N %C %G %l");
  REQUIRE(format.ok());
  CHECK(format->Header() ==
        "PARTITION NOD STATE AVAIL_FEATURES NODELIST CPUS(A/I/O/T) GRES "
        "TIMELIMIT\n");
  std::vector<std::string> rows =
      format->Rows(nodes, Partitions(), SinfoFilter(), false);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] ==
        "gpu*   2 idle a100,ib n[1-2] 0/128/0/128 gpu:8 2-00:00:00\n");
  CHECK(rows[1] == "gpu*   1 mix a100,ib n3 16/48/0/64 gpu:8 2-00:00:00\n");
  CHECK(rows[2] == "gpu*   1 idle h100 n4 0/64/0/64 gpu:8 2-00:00:00\n");

  std::vector<std::string> per_node =
      format->Rows(nodes, Partitions(), SinfoFilter(), true);
  CHECK(per_node.size() == 4);
  SinfoFilter mixed;
  mixed.states = {"mix"};
  CHECK(format->Rows(nodes, Partitions(), mixed, false).size() == 1);
}

TEST_CASE("sinfo -o long states, addresses and reasons", "[sinfo_format]") {
  v1::NodeRecord drained = Node("n1", 0, {});
  drained.set_drained(true);
  drained.set_drain_reason("bad fan");
  absl::StatusOr<SinfoFormat> format = SinfoFormat::Parse("%n|%o|%T|%E|%f");
  REQUIRE(format.ok());
  std::vector<std::string> rows =
      format->Rows({drained}, Partitions(), SinfoFilter(), true);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0] == "n1|10.0.0.1|drained|bad fan|(null)\n");
  CHECK_FALSE(SinfoFormat::Parse("%P %~").ok());
  CHECK_FALSE(SinfoFormat::Parse("%").ok());
}

}  // namespace sinfo_format_test
}  // namespace gantry::cli
