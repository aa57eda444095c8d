// sinfo's own layouts byte for byte: the default summary, -s, -N, -R, -O,
// node filters and state names.
#include <catch2/catch.hpp>

#include "cli/slurm/sinfo_format.h"

namespace gantry::cli {
namespace sinfo_layouts_test {

v1::NodeRecord Node(const std::string& name, uint32_t cpus_allocated) {
  v1::NodeRecord node;
  node.set_name(name);
  node.set_state(v1::NODE_UP);
  node.add_partitions("debug");
  node.mutable_inventory()->set_cpus(4);
  node.mutable_inventory()->set_cores(4);
  node.mutable_inventory()->set_packages(1);
  node.mutable_inventory()->set_memory_mb(1000);
  node.set_cpus_allocated(cpus_allocated);
  return node;
}

std::vector<v1::PartitionInfo> Partitions() {
  v1::PartitionInfo debug;
  debug.set_name("debug");
  debug.set_is_default(true);
  v1::PartitionInfo empty;
  empty.set_name("empty");
  empty.set_max_time_seconds(3600);
  return {debug, empty};
}

TEST_CASE("sinfo's default output, byte for byte", "[sinfo_layouts]") {
  const std::vector<v1::NodeRecord> nodes = {Node("n1", 0), Node("n2", 4),
                                             Node("n3", 2), Node("n4", 0)};
  absl::StatusOr<SinfoFormat> format = SinfoFormat::Parse(kSinfoDefaultFormat);
  REQUIRE(format.ok());
  // Busier states first (mix, alloc, idle), as sinfo's "#P,-t".
  CHECK(format->Table(nodes, Partitions(), SinfoFilter(), false, false) ==
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
        "debug*       up   infinite      1    mix n3\n"
        "debug*       up   infinite      1  alloc n2\n"
        "debug*       up   infinite      2   idle n[1,4]\n"
        "empty        up    1:00:00      0    n/a \n");
  CHECK(format->Table(nodes, Partitions(), SinfoFilter(), false, true)
            .rfind("debug*", 0) == 0);
}

TEST_CASE("a long partition name widens %#P", "[sinfo_layouts]") {
  v1::PartitionInfo wide;
  wide.set_name("a_very_long_partition");
  v1::NodeRecord node = Node("n1", 0);
  node.clear_partitions();
  node.add_partitions("a_very_long_partition");
  absl::StatusOr<SinfoFormat> format = SinfoFormat::Parse("%#P|%.5a");
  REQUIRE(format.ok());
  CHECK(format->Table({node}, {wide}, SinfoFilter(), false, false) ==
        "PARTITION            |AVAIL\n"
        "a_very_long_partition|   up\n");
}

TEST_CASE("sinfo -s, -N and -n", "[sinfo_layouts]") {
  v1::NodeRecord drained = Node("n3", 0);
  drained.set_drained(true);
  drained.set_drain_reason("bad fan");
  const std::vector<v1::NodeRecord> nodes = {Node("n1", 0), Node("n2", 4),
                                             drained};
  absl::StatusOr<SinfoFormat> summary =
      SinfoFormat::Parse(kSinfoSummarizeFormat);
  REQUIRE(summary.ok());
  CHECK(summary->Table(nodes, {Partitions()[0]}, SinfoFilter(), false, false) ==
        "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T)  NODELIST\n"
        "debug*       up   infinite          1/1/1/3  n[1-3]\n");
  absl::StatusOr<SinfoFormat> per_node = SinfoFormat::Parse(kSinfoNodeFormat);
  REQUIRE(per_node.ok());
  SinfoFilter only;
  only.nodes = {"n3", "n1"};
  CHECK(per_node->Table(nodes, {Partitions()[0]}, only, true, false) ==
        "NODELIST   NODES PARTITION STATE \n"
        "n1             1    debug* idle  \n"
        "n3             1    debug* drain \n");
}

TEST_CASE("sinfo -R lists reasons with who and when", "[sinfo_layouts]") {
  v1::NodeRecord drained = Node("n2", 0);
  drained.set_drained(true);
  drained.set_drain_reason("bad fan");
  drained.set_drain_user("root");
  v1::NodeRecord down = Node("n3", 0);
  down.set_state(v1::NODE_DOWN);
  down.set_reason("agent lost");
  absl::StatusOr<SinfoFormat> format = SinfoFormat::Parse("%20E|%9u|%N");
  REQUIRE(format.ok());
  SinfoFilter reasons;
  reasons.with_reason = true;
  CHECK(format->Table({Node("n1", 0), drained, down}, {Partitions()[0]},
                      reasons, false, false) ==
        "REASON              |USER     |NODELIST\n"
        "bad fan             |root     |n2\n"
        "agent lost          |gantryd  |n3\n");
}

TEST_CASE("sinfo's state words", "[sinfo_layouts]") {
  v1::NodeRecord node = Node("n1", 0);
  CHECK(SinfoNodeState(node) == "idle");
  node.set_state(v1::NODE_UNREACHABLE);
  CHECK(SinfoNodeState(node) == "idle*");
  node.set_state(v1::NODE_DOWN);
  CHECK(SinfoNodeState(node) == "down*");
  CHECK(SinfoLongState("down*") == "down*");
  node.set_state(v1::NODE_STATE_UNSPECIFIED);
  CHECK(SinfoNodeState(node) == "unk*");
  CHECK(SinfoLongState("drng") == "draining");
  CHECK(SinfoLongState("mix*") == "mixed*");
  SinfoFilter drain;
  drain.states = {"drain"};
  v1::NodeRecord draining = Node("n2", 2);
  draining.set_drained(true);
  CHECK(SinfoNodeState(draining) == "drng");
  // -t drain stands for drained and draining, as in sinfo.
  CHECK(drain.Matches(draining, "debug"));
}

TEST_CASE("sinfo -O fields", "[sinfo_layouts]") {
  absl::StatusOr<SinfoFormat> format =
      SinfoFormat::ParseFields("NodeList:6,StateLong:.9,CPUsState:12");
  REQUIRE(format.ok());
  CHECK(format->Table({Node("n1", 2)}, {Partitions()[0]}, SinfoFilter(), true,
                      false) ==
        "NODELI    STATECPUS(A/I/O/T\n"
        "n1        mixed2/2/0/4     \n");
  CHECK(!SinfoFormat::ParseFields("NodeLst").ok());
  CHECK(!SinfoFormat::ParseFields("NodeList,").ok());
}

}  // namespace sinfo_layouts_test
}  // namespace gantry::cli
