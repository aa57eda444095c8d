// Placement by dataset cache (daemon/scheduler/cache_preference.h): the
// bytes a node holds, the choice of leaves under a leaf limit, and, over
// seeded random clusters, that the default never widens a gang's switch
// span nor packs its leaves differently for cache hits while finding at
// least as many bytes cached, and that
// DatasetLocality::kCache finds at least as many as the default.
#include "daemon/scheduler/cache_preference.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "daemon/scheduler/scheduler.h"

namespace gantry {
namespace cache_preference_test {

using scheduler_internal::CachedBytes;

DatasetKey Key(uint32_t uid, std::string path) {
  return DatasetKey{uid, std::move(path)};
}

NodeSnapshot Node(std::string name, std::vector<std::string> path) {
  NodeSnapshot node;
  node.name = std::move(name);
  node.partitions = {"main"};
  node.cpus_total = node.cpus_free = 64;
  node.gpus_total = 8;
  node.free_gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  node.mem_total_mb = node.mem_free_mb = 512000;
  node.switch_path = std::move(path);
  return node;
}

PendingJob Gang(uint64_t id, uint32_t nodes) {
  PendingJob job;
  job.id = JobId(id);
  job.partition = "main";
  job.nodes = nodes;
  job.gpus_per_node = 8;
  return job;
}

// (level, leaves) of a start, from the nodes' switch paths alone: level 0
// is one leaf, k the k-th switch above the leaves that joins them all.
std::pair<std::size_t, std::size_t> SpanOf(
    const std::vector<NodeSnapshot>& nodes, const JobStart& start) {
  std::set<std::string> leaves;
  for (const NodeShare& share : start.shares) {
    leaves.insert(nodes[share.node.index()].switch_path.front());
  }
  if (leaves.size() <= 1) return {0, leaves.size()};
  const std::vector<std::string>& first =
      nodes[start.shares.front().node.index()].switch_path;
  for (std::size_t level = 1; level < first.size(); ++level) {
    const bool joined = std::all_of(
        start.shares.begin(), start.shares.end(), [&](const NodeShare& s) {
          return nodes[s.node.index()].switch_path[level] == first[level];
        });
    if (joined) return {level, leaves.size()};
  }
  return {first.size(), leaves.size()};
}

uint64_t BytesCached(const std::vector<NodeSnapshot>& nodes,
                     const PendingJob& job, const JobStart& start) {
  uint64_t bytes = 0;
  for (const NodeShare& share : start.shares) {
    bytes += CachedBytes(nodes[share.node.index()], job);
  }
  return bytes;
}

// How a start packs its leaves: for each leaf it uses, the leaf's nodes
// with all GPUs free (what an 8-GPU gang fits on) and how many it takes.
std::vector<std::pair<std::size_t, std::size_t>> FitOf(
    const std::vector<NodeSnapshot>& nodes, const JobStart& start) {
  std::map<std::string, std::size_t> taken;
  for (const NodeShare& share : start.shares) {
    ++taken[nodes[share.node.index()].switch_path.front()];
  }
  std::vector<std::pair<std::size_t, std::size_t>> fit;
  for (const auto& [leaf, count] : taken) {
    const auto room = static_cast<std::size_t>(
        std::count_if(nodes.begin(), nodes.end(), [&](const NodeSnapshot& n) {
          return n.switch_path.front() == leaf && n.free_gpus.size() == 8;
        }));
    fit.emplace_back(room, count);
  }
  std::sort(fit.begin(), fit.end());
  return fit;
}

TEST_CASE("cached bytes count the datasets the node holds for that owner",
          "[scheduler][cache]") {
  NodeSnapshot node = Node("n1", {"l1"});
  node.cached_datasets = {Key(1000, "/data/a"), Key(1000, "/data/b"),
                          Key(2000, "/data/c")};
  PendingJob job = Gang(1, 1);
  job.datasets = {{Key(1000, "/data/a"), 300},
                  {Key(1000, "/data/b"), 0},   // size unknown: one byte
                  {Key(1000, "/data/c"), 50},  // another owner's copy
                  {Key(1000, "/data/d"), 70}};
  CHECK(CachedBytes(node, job) == 301);
  node.cached_datasets.clear();
  CHECK(CachedBytes(node, job) == 0);
}

TEST_CASE("a gang spanning leaves moves only to leaves it packs as tightly",
          "[scheduler][cache]") {
  // One spine, leaves of 3, 2, 1 and 3 free nodes; the gang of 4 needs two
  // leaves. Without datasets: the fullest leaf (l1) and the tightest that
  // holds the rest (l3), which leaves l2 and l4 whole. The data is on l2's
  // two nodes (large): l2 + l1 would be the same span but leave l1 and l3
  // with one node each, so the default keeps l1 + l3. When l4 holds the
  // data instead, l4 + l3 packs as l1 + l3 does: it goes there.
  std::vector<NodeSnapshot> nodes;
  for (int i = 1; i <= 9; ++i) {
    const std::string leaf = i <= 3   ? "l1"
                             : i <= 5 ? "l2"
                             : i == 6 ? "l3"
                                      : "l4";
    nodes.push_back(Node("n" + std::to_string(i), {leaf, "s1"}));
  }
  nodes[3].cached_datasets = nodes[4].cached_datasets = {Key(7, "/big")};
  PendingJob job = Gang(1, 4);
  auto names_of = [&](const ScheduleResult& result) {
    std::vector<std::string> names;
    for (const NodeShare& s : result.starts.at(0).shares) {
      names.push_back(nodes[s.node.index()].name);
    }
    return names;
  };
  const ScheduleResult plain = Schedule(nodes, {job});
  CHECK(names_of(plain) == std::vector<std::string>{"n1", "n2", "n3", "n6"});

  job.datasets = {{Key(7, "/big"), 1000}};
  CHECK(names_of(Schedule(nodes, {job})) == names_of(plain));
  // Asked for (--dataset-locality=cache), the cached leaf wins.
  job.dataset_locality = DatasetLocality::kCache;
  const std::vector<std::string> cache_first = names_of(Schedule(nodes, {job}));
  CHECK(std::count(cache_first.begin(), cache_first.end(), "n4") == 1);
  CHECK(std::count(cache_first.begin(), cache_first.end(), "n5") == 1);

  job.dataset_locality = DatasetLocality::kTopology;
  nodes[3].cached_datasets.clear();
  nodes[4].cached_datasets.clear();
  for (int i = 6; i < 9; ++i) nodes[i].cached_datasets = {Key(7, "/big")};
  const ScheduleResult moved = Schedule(nodes, {job});
  CHECK(names_of(moved) == std::vector<std::string>{"n7", "n8", "n9", "n6"});
  CHECK(SpanOf(nodes, moved.starts[0]) == SpanOf(nodes, plain.starts[0]));
  CHECK(FitOf(nodes, moved.starts[0]) == FitOf(nodes, plain.starts[0]));
}

TEST_CASE(
    "over random clusters the default keeps the span and the packing of "
    "leaves and finds at least as much cached, and the opt-in at least as "
    "much as the default",
    "[scheduler][cache]") {
  std::mt19937 random(24);
  int moved = 0, widened_by_opt_in = 0;
  for (int trial = 0; trial < 300; ++trial) {
    // 2 cores x 3 spines x 4 leaves x 4 nodes, some busy, some cached.
    std::vector<NodeSnapshot> nodes;
    std::vector<RunningJob> running;
    const std::vector<DatasetKey> data = {Key(1, "/a"), Key(1, "/b"),
                                          Key(1, "/c")};
    for (int i = 0; i < 96; ++i) {
      NodeSnapshot node =
          Node("n" + std::to_string(i),
               {"l" + std::to_string(i / 4), "s" + std::to_string(i / 16),
                "c" + std::to_string(i / 48)});
      if (random() % 3 == 0) node.free_gpus.clear();
      for (const DatasetKey& key : data) {
        if (random() % 5 == 0) node.cached_datasets.push_back(key);
      }
      nodes.push_back(std::move(node));
    }
    PendingJob job = Gang(1, 2 + random() % 12);
    const ScheduleResult plain = Schedule(nodes, {job});
    job.datasets = {{data[0], 1 + random() % 1000},
                    {data[1], 1 + random() % 1000},
                    {data[2], 0}};
    const ScheduleResult by_topology = Schedule(nodes, {job});
    job.dataset_locality = DatasetLocality::kCache;
    const ScheduleResult by_cache = Schedule(nodes, {job});
    REQUIRE(plain.starts.size() == by_topology.starts.size());
    REQUIRE(plain.starts.size() == by_cache.starts.size());
    if (plain.starts.empty()) continue;
    INFO("trial " << trial << ", " << job.nodes << " nodes");
    const JobStart& p = plain.starts[0];
    const JobStart& t = by_topology.starts[0];
    const JobStart& c = by_cache.starts[0];
    CHECK(t.shares.size() == job.nodes);
    CHECK(c.shares.size() == job.nodes);
    CHECK(SpanOf(nodes, t) == SpanOf(nodes, p));
    CHECK(FitOf(nodes, t) == FitOf(nodes, p));
    CHECK(BytesCached(nodes, job, t) >= BytesCached(nodes, job, p));
    CHECK(BytesCached(nodes, job, c) >= BytesCached(nodes, job, t));
    moved += BytesCached(nodes, job, t) > BytesCached(nodes, job, p);
    widened_by_opt_in += SpanOf(nodes, c) > SpanOf(nodes, t);
  }
  // The cases must exercise both rules, not pass vacuously.
  CHECK(moved > 0);
  CHECK(widened_by_opt_in > 0);
}

}  // namespace cache_preference_test
}  // namespace gantry
