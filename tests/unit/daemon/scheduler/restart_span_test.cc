// A restart after many nodes fail at once, on a real imported switch tree:
// the replacement nodes (hot spares first) must keep the gang's switch span
// as low as a fresh job's placement on the same free nodes, never wider.
// The span expected is worked out here from the tree alone (lowest switch
// level that can hold the gang, then the fewest leaves under it), apart
// from the scheduler's own fabric index.
//
// Tree: Slurm's own test case of a 3-level tree with 10,000 nodes
// (../shared/data/fabric/slurm), 20 nodes per leaf; a seeded share of the
// nodes is busy, one node in eight of every leaf is a hot spare.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/slurm_topology_parser.h"
#include "daemon/scheduler/scheduler.h"
#include "tests/unit/support/shared_data.h"

namespace gantry {
namespace restart_span_test {

constexpr uint32_t kJobNodes = 64;
constexpr uint32_t kGpus = 8;

struct Span {
  std::size_t level = 0;  // 0: one leaf; k: the k-th switch above the leaf
  std::size_t leaves = 0;
  bool operator==(const Span&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Span& span) {
  return out << "level " << span.level << ", " << span.leaves << " leaves";
}

// The switches above each node, leaf first (first parent where several).
std::vector<std::string> PathOf(const Topology& tree, const std::string& node) {
  std::vector<std::string> path;
  std::optional<std::string> name = tree.LeafSwitchOf(node);
  while (name.has_value()) {
    path.push_back(*name);
    const Topology::Switch* sw = tree.FindSwitch(*name);
    if (sw == nullptr || sw->parents.empty()) break;
    name = sw->parents.front().name;
  }
  return path;
}

class Cluster {
 public:
  Cluster(const Topology& tree, uint32_t seed) {
    std::mt19937 random(seed);
    for (const std::string& name : tree.nodes()) {
      NodeSnapshot node;
      node.name = name;
      node.partitions = {"main"};
      node.cpus_total = node.cpus_free = 64;
      node.gpus_total = kGpus;
      node.mem_total_mb = node.mem_free_mb = 512000;
      node.switch_path = PathOf(tree, name);
      node.hot_spare = nodes_.size() % 8 == 3;
      // About two nodes in three busy, so leaves have uneven room.
      if (node.hot_spare || random() % 3 == 0) {
        for (uint32_t g = 0; g < kGpus; ++g) node.free_gpus.push_back(g);
      } else {
        node.cpus_free = 0;
      }
      nodes_.push_back(std::move(node));
    }
  }

  std::vector<NodeSnapshot>& nodes() { return nodes_; }

  bool Fits(const NodeSnapshot& node, bool restart) const {
    return node.schedulable && (restart || !node.hot_spare) &&
           node.cpus_free >= 1 && node.free_gpus.size() >= kGpus;
  }

  // The best span a gang of `need` nodes can have on the free nodes.
  Span BestSpan(std::size_t need, bool restart) const {
    std::map<std::string, std::size_t> room_of_leaf;
    std::map<std::string, const std::vector<std::string>*> path_of_leaf;
    for (const NodeSnapshot& node : nodes_) {
      const std::string& leaf = node.switch_path.front();
      path_of_leaf[leaf] = &node.switch_path;
      if (Fits(node, restart)) ++room_of_leaf[leaf];
    }
    const std::size_t depth = nodes_.front().switch_path.size();
    for (std::size_t level = 0; level < depth; ++level) {
      // Per switch at this level, the room of each leaf below it.
      std::map<std::string, std::vector<std::size_t>> rooms;
      for (const auto& [leaf, room] : room_of_leaf) {
        rooms[(*path_of_leaf[leaf])[level]].push_back(room);
      }
      std::size_t fewest = 0;
      for (auto& [name, leaf_rooms] : rooms) {
        std::sort(leaf_rooms.rbegin(), leaf_rooms.rend());
        std::size_t gathered = 0, leaves = 0;
        for (std::size_t room : leaf_rooms) {
          if (gathered >= need) break;
          gathered += room;
          ++leaves;
        }
        if (gathered >= need && (fewest == 0 || leaves < fewest)) {
          fewest = leaves;
        }
      }
      if (fewest > 0) return {level, fewest};
    }
    return {};
  }

  Span SpanOf(const JobStart& start) const {
    std::set<std::string> leaves;
    for (const NodeShare& share : start.shares) {
      leaves.insert(nodes_[share.node.index()].switch_path.front());
    }
    Span span{0, leaves.size()};
    if (leaves.size() <= 1) return span;
    const std::vector<std::string>& first =
        nodes_[start.shares.front().node.index()].switch_path;
    for (span.level = 1; span.level < first.size(); ++span.level) {
      const bool shared = std::all_of(
          start.shares.begin(), start.shares.end(), [&](const NodeShare& s) {
            return nodes_[s.node.index()].switch_path[span.level] ==
                   first[span.level];
          });
      if (shared) break;
    }
    return span;
  }

  void Take(const JobStart& start) {
    for (const NodeShare& share : start.shares) {
      NodeSnapshot& node = nodes_[share.node.index()];
      node.cpus_free -= share.cpus;
      node.free_gpus.clear();
    }
  }
  void Release(const JobStart& start) {
    for (const NodeShare& share : start.shares) {
      NodeSnapshot& node = nodes_[share.node.index()];
      node.cpus_free = node.cpus_total;
      node.free_gpus.clear();
      for (uint32_t g = 0; g < kGpus; ++g) node.free_gpus.push_back(g);
    }
  }

 private:
  std::vector<NodeSnapshot> nodes_;
};

PendingJob GangJob(bool restart) {
  PendingJob job;
  job.id = JobId(7);
  job.partition = "main";
  job.nodes = kJobNodes;
  job.gpus_per_node = kGpus;
  job.is_restart = restart;
  return job;
}

JobStart PlaceOne(const std::vector<NodeSnapshot>& nodes, bool restart) {
  ScheduleResult result =
      Schedule(nodes, {GangJob(restart)}, {}, SchedulerOptions{true, true, 0});
  REQUIRE(result.starts.size() == 1);
  REQUIRE(result.starts.front().shares.size() == kJobNodes);
  return result.starts.front();
}

// Fails `failed` (indices into the snapshot), restarts the job and checks
// the restart against the best span and against a fresh job's placement.
void CheckRestart(Cluster& cluster, const JobStart& first,
                  const std::set<std::size_t>& failed) {
  cluster.Release(first);
  for (std::size_t index : failed) cluster.nodes()[index].schedulable = false;
  const JobStart restart = PlaceOne(cluster.nodes(), true);
  for (const NodeShare& share : restart.shares) {
    CHECK_FALSE(failed.count(share.node.index()));
  }
  const Span best = cluster.BestSpan(kJobNodes, true);
  CHECK(cluster.SpanOf(restart) == best);
  CHECK(restart.leaf_switches == best.leaves);
  // A fresh job that may use the same nodes (the spares as plain nodes)
  // gets no better span.
  std::vector<NodeSnapshot> plain = cluster.nodes();
  for (NodeSnapshot& node : plain) node.hot_spare = false;
  CHECK(cluster.SpanOf(PlaceOne(plain, false)) == cluster.SpanOf(restart));
}

const std::string& TreePath() {
  static const std::string path = testing::SharedDataPath(
      "fabric/slurm/slurm-test133-10k-nodes-3level-tree.topology.conf");
  return path;
}

Topology LoadTree() {
  absl::StatusOr<Topology> tree = LoadSlurmTopologyFile(TreePath());
  REQUIRE(tree.ok());
  return *std::move(tree);
}

TEST_CASE(
    "a whole leaf failing under a 64-node gang: the restart keeps the "
    "lowest span the free nodes allow",
    "[scheduler][restart][shared-data]") {
  GANTRY_REQUIRE_SHARED_DATA(TreePath());
  const Topology tree = LoadTree();
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    INFO("seed " << seed);
    Cluster cluster(tree, seed);
    const JobStart first = PlaceOne(cluster.nodes(), false);
    CHECK(cluster.SpanOf(first) == cluster.BestSpan(kJobNodes, false));
    cluster.Take(first);
    // The leaf holding most of the gang fails, every node on it.
    std::map<std::string, std::size_t> on_leaf;
    for (const NodeShare& share : first.shares) {
      ++on_leaf[cluster.nodes()[share.node.index()].switch_path.front()];
    }
    const std::string leaf = std::max_element(on_leaf.begin(), on_leaf.end(),
                                              [](const auto& a, const auto& b) {
                                                return a.second < b.second;
                                              })
                                 ->first;
    std::set<std::size_t> failed;
    for (std::size_t i = 0; i < cluster.nodes().size(); ++i) {
      if (cluster.nodes()[i].switch_path.front() == leaf) failed.insert(i);
    }
    CheckRestart(cluster, first, failed);
  }
}

TEST_CASE(
    "8 nodes of a 64-node gang failing together: the restart keeps "
    "the lowest span the free nodes allow",
    "[scheduler][restart][shared-data]") {
  GANTRY_REQUIRE_SHARED_DATA(TreePath());
  const Topology tree = LoadTree();
  for (uint32_t seed = 11; seed <= 15; ++seed) {
    INFO("seed " << seed);
    Cluster cluster(tree, seed);
    const JobStart first = PlaceOne(cluster.nodes(), false);
    cluster.Take(first);
    std::mt19937 random(seed);
    std::set<std::size_t> failed;
    while (failed.size() < 8) {
      failed.insert(first.shares[random() % kJobNodes].node.index());
    }
    CheckRestart(cluster, first, failed);
  }
}

TEST_CASE(
    "a restart on scattered spares is not spread wider than the free "
    "nodes allow",
    "[scheduler][restart][shared-data]") {
  // Only spares and a few nodes are free; a small gang fits under one leaf
  // with a spare and plain nodes, but on spares alone only across leaves.
  GANTRY_REQUIRE_SHARED_DATA(TreePath());
  const Topology tree = LoadTree();
  Cluster cluster(tree, 21);
  for (NodeSnapshot& node : cluster.nodes()) {
    if (!node.hot_spare) {
      node.cpus_free = 0;
      node.free_gpus.clear();
    }
  }
  // Free three plain nodes on the leaf of the 100th spare.
  std::size_t spare = 0, seen = 0;
  for (; spare < cluster.nodes().size(); ++spare) {
    if (cluster.nodes()[spare].hot_spare && ++seen == 100) break;
  }
  const std::string leaf = cluster.nodes()[spare].switch_path.front();
  std::size_t freed = 0;
  for (NodeSnapshot& node : cluster.nodes()) {
    if (freed < 3 && !node.hot_spare && node.switch_path.front() == leaf) {
      node.cpus_free = node.cpus_total;
      for (uint32_t g = 0; g < kGpus; ++g) node.free_gpus.push_back(g);
      ++freed;
    }
  }
  REQUIRE(freed == 3);
  PendingJob job = GangJob(true);
  job.nodes = 4;
  ScheduleResult result =
      Schedule(cluster.nodes(), {job}, {}, SchedulerOptions{true, true, 0});
  REQUIRE(result.starts.size() == 1);
  CHECK(result.starts.front().leaf_switches == 1);
  CHECK(cluster.SpanOf(result.starts.front()) == Span{0, 1});
}

}  // namespace restart_span_test
}  // namespace gantry
