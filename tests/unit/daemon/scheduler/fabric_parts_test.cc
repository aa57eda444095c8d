// The scheduler on real imported trees with parts no switch joins (Slurm's
// test case 6, disconnected trunks) and with nodes missing from the tree
// (topograph's 96-node tree plus nodes it does not list), the snapshot
// built as gantryd builds it (SetFabricPlace). What is checked comes from
// the tree itself (Topology::PartOf, Distance), apart from the scheduler's
// fabric index: every multi-node start lies within one part, and
// unlisted nodes are taken only when no listed set fits.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/scheduler.h"
#include "tests/unit/support/shared_data.h"
#include "tests/unit/support/slurm_topology_data.h"

namespace gantry {
namespace fabric_parts_test {

constexpr uint32_t kGpus = 8;

constexpr char kCaseSix[] = "slurm-test133-disconnected-trunks.topology.conf";
constexpr char kTopograph[] = "topograph-expected-tree.topology.conf";

NodeSnapshot IdleNode(const Topology& tree, const std::string& name) {
  NodeSnapshot node;
  node.name = name;
  node.partitions = {"main"};
  node.cpus_total = node.cpus_free = 64;
  node.gpus_total = kGpus;
  for (uint32_t g = 0; g < kGpus; ++g) node.free_gpus.push_back(g);
  node.mem_total_mb = node.mem_free_mb = 512000;
  SetFabricPlace(tree, node);
  return node;
}

// Every node of the tree, then `extra` nodes it does not list.
std::vector<NodeSnapshot> Cluster(const Topology& tree,
                                  const std::vector<std::string>& extra = {}) {
  std::vector<NodeSnapshot> nodes;
  for (const std::string& name : tree.nodes()) {
    nodes.push_back(IdleNode(tree, name));
  }
  for (const std::string& name : extra) nodes.push_back(IdleNode(tree, name));
  return nodes;
}

void Occupy(NodeSnapshot& node) {
  node.cpus_free = 0;
  node.free_gpus.clear();
}

// Busy everywhere but `free` (names).
void LeaveFree(std::vector<NodeSnapshot>& nodes,
               const std::set<std::string>& free) {
  for (NodeSnapshot& node : nodes) {
    if (!free.count(node.name)) Occupy(node);
  }
}

PendingJob Gang(uint64_t id, uint32_t nodes, bool restart = false) {
  PendingJob job;
  job.id = JobId(id);
  job.partition = "main";
  job.nodes = nodes;
  job.gpus_per_node = kGpus;
  job.is_restart = restart;
  return job;
}

std::vector<std::string> NamesOf(const std::vector<NodeSnapshot>& nodes,
                                 const JobStart& start) {
  std::vector<std::string> names;
  for (const NodeShare& share : start.shares) {
    names.push_back(nodes[share.node.index()].name);
  }
  return names;
}

// All in one part of `tree`, each pair joined by a path through switches.
bool InOnePart(const Topology& tree, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (tree.PartOf(name) < 0 || tree.PartOf(name) != tree.PartOf(names[0]) ||
        !tree.Distance(names[0], name).has_value()) {
      return false;
    }
  }
  return true;
}

const JobWait* WaitOf(const ScheduleResult& result, uint64_t id) {
  for (const JobWait& wait : result.waits) {
    if (wait.job_id.value() == id) return &wait;
  }
  return nullptr;
}

SchedulerOptions Options(bool topology_aware, bool backfill = true) {
  SchedulerOptions options;
  options.topology_aware = topology_aware;
  options.backfill = backfill;
  return options;
}

TEST_CASE("case 6: four free nodes on three trunks start no 4-node job",
          "[scheduler][parts][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree, kCaseSix);
  std::vector<NodeSnapshot> nodes = Cluster(tree);
  // The placement: free nodes on spineA, spineB and leafC only.
  LeaveFree(nodes, {"node1", "node9", "node17", "node33"});
  for (bool topology_aware : {true, false}) {
    INFO("topology_aware " << topology_aware);
    const ScheduleResult result =
        Schedule(nodes, {Gang(1, 4)}, {}, Options(topology_aware));
    CHECK(result.starts.empty());
    const JobWait* wait = WaitOf(result, 1);
    REQUIRE(wait != nullptr);
    CHECK(wait->reason == "Resources");
  }
  // Two nodes of one trunk do start, together.
  const ScheduleResult pair = Schedule(nodes, {Gang(2, 2)}, {}, Options(true));
  REQUIRE(pair.starts.size() == 1);
  CHECK(NamesOf(nodes, pair.starts[0]) ==
        std::vector<std::string>{"node1", "node9"});
}

TEST_CASE("case 6: every gang of an idle cluster stays within one trunk",
          "[scheduler][parts][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree, kCaseSix);
  const std::vector<NodeSnapshot> nodes = Cluster(tree);
  // A queue that fills the 40 nodes: each start must be within one part.
  std::vector<PendingJob> queue;
  for (uint32_t size : {12u, 9u, 7u, 5u, 4u, 3u}) {
    queue.push_back(Gang(queue.size() + 1, size));
  }
  for (bool topology_aware : {true, false}) {
    INFO("topology_aware " << topology_aware);
    const ScheduleResult result =
        Schedule(nodes, queue, {}, Options(topology_aware));
    uint32_t placed = 0;
    for (const JobStart& start : result.starts) {
      const std::vector<std::string> names = NamesOf(nodes, start);
      INFO("job " << start.job_id.value());
      CHECK(InOnePart(tree, names));
      placed += static_cast<uint32_t>(names.size());
    }
    // 12+4 on one trunk, 9+7 on the other, 5+3 on leafC: all of it, and
    // first fit no longer runs the 9-node job over two trunks.
    CHECK(placed == 40);
    CHECK(result.starts.size() == 6);
  }
}

TEST_CASE("case 6: a job bigger than every trunk can never run",
          "[scheduler][parts][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree, kCaseSix);
  const std::vector<NodeSnapshot> nodes = Cluster(tree);
  const ScheduleResult result =
      Schedule(nodes, {Gang(1, 17), Gang(2, 16)}, {}, Options(true));
  const JobWait* wait = WaitOf(result, 1);
  REQUIRE(wait != nullptr);
  CHECK(wait->reason == "PartitionNodeLimit");
  CHECK(wait->detail ==
        "needs 17 node(s) with 1 CPUs, 8 GPUs each; partition main has 40 "
        "such node(s); at most 16 of them in one connected part of the "
        "fabric (no switch joins leafC, spineA, spineB)");
  // The 16-node job is not blocked by it and takes one whole trunk.
  REQUIRE(result.starts.size() == 1);
  CHECK(InOnePart(tree, NamesOf(nodes, result.starts[0])));
  CHECK(result.starts[0].leaf_switches == 2);
}

TEST_CASE("case 6: a node range takes what one trunk holds",
          "[scheduler][parts][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree, kCaseSix);
  const std::vector<NodeSnapshot> nodes = Cluster(tree);
  PendingJob job = Gang(1, 40);
  job.min_nodes = 2;
  const ScheduleResult result = Schedule(nodes, {job}, {}, Options(true));
  REQUIRE(result.starts.size() == 1);
  CHECK(result.starts[0].shares.size() == 16);
  CHECK(InOnePart(tree, NamesOf(nodes, result.starts[0])));
}

TEST_CASE("case 6: --nodelist nodes of two trunks can never run together",
          "[scheduler][parts][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree, kCaseSix);
  const std::vector<NodeSnapshot> nodes = Cluster(tree);
  PendingJob apart = Gang(1, 2);
  apart.required_nodes = {"node1", "node33"};
  PendingJob with_rest = Gang(2, 3);
  with_rest.required_nodes = {"node33"};
  const ScheduleResult result =
      Schedule(nodes, {apart, with_rest}, {}, Options(true));
  const JobWait* wait = WaitOf(result, 1);
  REQUIRE(wait != nullptr);
  CHECK(wait->reason == "PartitionNodeLimit");
  CHECK(absl::StrContains(wait->detail,
                          "its --nodelist nodes are in parts of the fabric "
                          "that no switch joins (spineA, leafC)"));
  // The rest of a listed job comes from its listed node's part.
  REQUIRE(result.starts.size() == 1);
  const std::vector<std::string> names = NamesOf(nodes, result.starts[0]);
  CHECK(names.front() == "node33");
  CHECK(InOnePart(tree, names));
}

TEST_CASE("case 6: a restart takes no spares of two trunks",
          "[scheduler][parts][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree, kCaseSix);
  std::vector<NodeSnapshot> nodes = Cluster(tree);
  // Spares on spineB and leafC, and one free node on spineA: a 2-node
  // restart used to take both spares, across two trunks.
  for (NodeSnapshot& node : nodes) {
    node.hot_spare = node.name == "node17" || node.name == "node33";
  }
  LeaveFree(nodes, {"node17", "node33", "node2"});
  const ScheduleResult apart =
      Schedule(nodes, {Gang(1, 2, /*restart=*/true)}, {}, Options(true));
  CHECK(apart.starts.empty());
  REQUIRE(WaitOf(apart, 1) != nullptr);
  CHECK(WaitOf(apart, 1)->reason == "Resources");
  // With a second free node on spineA it comes back there.
  nodes[9] = IdleNode(tree, "node10");
  const ScheduleResult result =
      Schedule(nodes, {Gang(1, 2, /*restart=*/true)}, {}, Options(true));
  REQUIRE(result.starts.size() == 1);
  CHECK(NamesOf(nodes, result.starts[0]) ==
        std::vector<std::string>{"node2", "node10"});
}

TEST_CASE("case 6: a backfill reservation lies within one trunk",
          "[scheduler][parts][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree, kCaseSix);
  std::vector<NodeSnapshot> nodes = Cluster(tree);
  // node[1-6] of spineA are free; leafC's job ends at 1000, the rest of
  // spineA's at 2000, spineB's at 3000. At 1000, 14 nodes are free but on
  // two trunks; a 12-node job fits at 2000, on spineA.
  std::vector<RunningJob> running(3);
  const int64_t end_of_part[] = {2000, 3000, 1000};  // spineA, spineB, leafC
  for (NodeSnapshot& node : nodes) {
    const int part = tree.PartOf(node.name);
    if (&node - nodes.data() < 6) continue;  // node1..node6
    RunningJob& job = running[part];
    job.id = JobId(100 + part);
    job.expected_end_ms = end_of_part[part];
    NodeShare share;
    share.node = NodeId(static_cast<std::size_t>(&node - nodes.data()));
    share.cpus = 64;
    share.gpus = node.free_gpus;
    job.shares.push_back(share);
    Occupy(node);
  }
  const ScheduleResult result =
      Schedule(nodes, {Gang(1, 12)}, running, Options(true));
  REQUIRE(result.reservations.size() == 1);
  CHECK(result.reservations[0].start_ms == 2000);
  std::vector<std::string> names;
  for (NodeId node : result.reservations[0].nodes) {
    names.push_back(nodes[node.index()].name);
  }
  CHECK(names.size() == 12);
  CHECK(InOnePart(tree, names));
  CHECK(tree.parts()[tree.PartOf(names[0])].name() == "spineA");
}

// topograph's 96-node tree (12 leaves of 8 under 6 spines and a core),
// and four nodes it does not list.
const std::vector<std::string> kUnlisted = {"gpu-x1", "gpu-x2", "gpu-x3",
                                            "gpu-x4"};

TEST_CASE("unlisted nodes are last, even for a --switches=1 gang",
          "[scheduler][unlisted][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree, kTopograph);
  std::vector<NodeSnapshot> nodes = Cluster(tree, kUnlisted);
  // One listed leaf with five free nodes (switch.1.1: srv[1101-1105]);
  // the four unlisted nodes are free too and used to look like one
  // tighter leaf.
  LeaveFree(nodes, {"srv1101", "srv1102", "srv1103", "srv1104", "srv1105",
                    "gpu-x1", "gpu-x2", "gpu-x3", "gpu-x4"});
  PendingJob one_switch = Gang(1, 4);
  one_switch.max_switches = 1;
  const ScheduleResult result =
      Schedule(nodes, {one_switch, Gang(2, 1)}, {}, Options(true));
  REQUIRE(result.starts.size() == 2);
  CHECK(NamesOf(nodes, result.starts[0]) ==
        std::vector<std::string>{"srv1101", "srv1102", "srv1103", "srv1104"});
  CHECK(result.starts[0].leaf_switches == 1);
  // A single node is last too: the listed srv1105 before any unlisted.
  CHECK(NamesOf(nodes, result.starts[1]) ==
        std::vector<std::string>{"srv1105"});
}

TEST_CASE("unlisted nodes take a gang only when no listed set fits",
          "[scheduler][unlisted][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree, kTopograph);
  std::vector<NodeSnapshot> nodes = Cluster(tree, kUnlisted);
  // Two listed nodes free, under different leaves: a 3-node gang fits on
  // the unlisted nodes only, never two listed plus one unlisted.
  LeaveFree(nodes, {"srv1101", "srv6208", "gpu-x1", "gpu-x2", "gpu-x3"});
  PendingJob limited = Gang(2, 3);
  limited.max_switches = 2;
  const ScheduleResult result =
      Schedule(nodes, {Gang(1, 3), limited}, {}, Options(true, false));
  REQUIRE(WaitOf(result, 2) != nullptr);
  CHECK(WaitOf(result, 2)->reason == "Resources");
  REQUIRE(result.starts.size() == 1);
  CHECK(NamesOf(nodes, result.starts[0]) ==
        std::vector<std::string>{"gpu-x1", "gpu-x2", "gpu-x3"});
  CHECK(result.starts[0].leaf_switches == 3);  // a leaf each: unknown
  // The two listed nodes: a pair of the tree, not of the unlisted ones.
  const ScheduleResult pair = Schedule(nodes, {Gang(3, 2)}, {}, Options(true));
  REQUIRE(pair.starts.size() == 1);
  CHECK(NamesOf(nodes, pair.starts[0]) ==
        std::vector<std::string>{"srv1101", "srv6208"});
  // First fit keeps the same rule.
  const ScheduleResult first_fit =
      Schedule(nodes, {Gang(4, 2)}, {}, Options(false));
  REQUIRE(first_fit.starts.size() == 1);
  CHECK(NamesOf(nodes, first_fit.starts[0]) ==
        std::vector<std::string>{"srv1101", "srv6208"});
}

TEST_CASE("the unlisted-node rules as the admin sets them",
          "[scheduler][unlisted][shared_data]") {
  LOAD_SLURM_TREE_OR_SKIP(tree, kTopograph);
  std::vector<NodeSnapshot> nodes = Cluster(tree, kUnlisted);
  LeaveFree(nodes, {"gpu-x1", "gpu-x2"});
  SchedulerOptions options = Options(true, false);
  SECTION("single: one-node jobs only") {
    options.unlisted_nodes = UnlistedNodes::kSingleNode;
    const ScheduleResult one = Schedule(nodes, {Gang(1, 1)}, {}, options);
    REQUIRE(one.starts.size() == 1);
    CHECK(NamesOf(nodes, one.starts[0]) == std::vector<std::string>{"gpu-x1"});
    const ScheduleResult two = Schedule(nodes, {Gang(2, 2)}, {}, options);
    CHECK(two.starts.empty());
    CHECK(WaitOf(two, 2)->reason == "Resources");
  }
  SECTION("never: none") {
    options.unlisted_nodes = UnlistedNodes::kNever;
    const ScheduleResult one = Schedule(nodes, {Gang(1, 1)}, {}, options);
    CHECK(one.starts.empty());
    // 100 nodes, 96 of them listed: 97 can never run.
    const ScheduleResult big = Schedule(nodes, {Gang(2, 97)}, {}, options);
    const JobWait* wait = WaitOf(big, 2);
    REQUIRE(wait != nullptr);
    CHECK(wait->reason == "PartitionNodeLimit");
    CHECK(absl::StrContains(wait->detail,
                            "partition main has 100 such node(s); 4 of them "
                            "are outside the imported topology and take no "
                            "jobs (gantryd --unlisted-nodes=never)"));
  }
  SECTION("last: a job as big as the listed and unlisted nodes together") {
    const ScheduleResult big = Schedule(nodes, {Gang(2, 97)}, {}, options);
    const JobWait* wait = WaitOf(big, 2);
    REQUIRE(wait != nullptr);
    CHECK(wait->reason == "PartitionNodeLimit");
    CHECK(absl::StrContains(wait->detail,
                            "at most 96 of them in one connected part of the "
                            "fabric (no switch joins switch.3.1 and the nodes "
                            "outside the topology)"));
  }
}

TEST_CASE("without a tree every node is listed alike",
          "[scheduler][unlisted]") {
  std::vector<NodeSnapshot> nodes;
  for (const char* name : {"a", "b", "c"}) {
    NodeSnapshot node = IdleNode(Topology(), name);
    CHECK(node.switch_path.empty());
    CHECK(node.fabric_part.empty());
    nodes.push_back(std::move(node));
  }
  SchedulerOptions options = Options(true);
  options.unlisted_nodes = UnlistedNodes::kNever;  // no tree: no effect
  PendingJob job = Gang(1, 3);
  job.max_switches = 1;  // one flat leaf
  const ScheduleResult result = Schedule(nodes, {job}, {}, options);
  REQUIRE(result.starts.size() == 1);
  CHECK(result.starts[0].leaf_switches == 1);
}

TEST_CASE("PartTally counts what one part offers", "[scheduler][parts]") {
  PartTally tally;
  for (int i = 0; i < 16; ++i) tally.Add("spineA");
  for (int i = 0; i < 8; ++i) tally.Add("leafC");
  for (int i = 0; i < 20; ++i) tally.Add("");
  CHECK(tally.Total() == 44);
  CHECK(tally.Largest(UnlistedNodes::kLast, 4) == 20);
  CHECK(tally.Largest(UnlistedNodes::kSingleNode, 4) == 16);
  CHECK(tally.Largest(UnlistedNodes::kSingleNode, 1) == 20);
  CHECK(tally.Largest(UnlistedNodes::kNever, 1) == 16);
  CHECK(tally.LimitNote(UnlistedNodes::kSingleNode, 2) ==
        "; at most 16 of them in one connected part of the fabric (no "
        "switch joins leafC, spineA); 20 of them are outside the imported "
        "topology and take single-node jobs only (gantryd "
        "--unlisted-nodes=single)");
  PartTally flat;
  for (int i = 0; i < 5; ++i) flat.Add("");
  CHECK(flat.Largest(UnlistedNodes::kNever, 5) == 5);
  CHECK(flat.LimitNote(UnlistedNodes::kNever, 5).empty());
  CHECK(ParseUnlistedNodes("single").value() == UnlistedNodes::kSingleNode);
  CHECK(ParseUnlistedNodes("sometimes").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace fabric_parts_test
}  // namespace gantry
