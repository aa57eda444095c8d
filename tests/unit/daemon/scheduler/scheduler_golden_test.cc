// Golden tests for the scheduler core: each tests/golden/scheduler/*.txt
// file describes a cluster, running jobs and a pending queue, then the
// decisions expected after a line "--- expected". The input format:
//
//   options backfill=yes topology=yes now=MS unlisted=last|single|never
//   nodes HOSTLIST [path=LEAF/SPINE/CORE] gpus=8 cpus=64 mem=MB
//         [hca=mlx5_0,mlx5_0,...] [switch=s0,s0,...] [numa=0,0,...]
//         [package=0,0,...] [partitions=a,b] [spare] [down]
//     (switch, numa, package: where each GPU sits, for one-node jobs'
//     packing; a switch named "-" is none)
//         [cache=DATASET,DATASET...]   (datasets in the nodes' caches)
//   running ID end=MS NODE:CPUS:GPU,GPU[:MEM] ...   (their resources are used)
//   job ID nodes=N [gpus=G] [tasks=T] [cpus=C] [mem=MB] [time=MS]
//       [switches=N[@MS]] [exclusive] [restart] [partition=P]
//       [data=DATASET[:BYTES],...] [locality=topology|cache]
//
// A DATASET name stands for the key (uid 1000, "/datasets/NAME").
//
// A path's last switch names the node's connected part of the fabric
// (NodeSnapshot::fabric_part); beside nodes with a path, one without is
// missing from the tree (fabric_parts.h). The queue is taken in file order
// (already priority order). Output lines:
//   start ID leaves=K [backfill] NODE[GPUS] ...
//   wait ID REASON [at=MS]
//   reserve ID at=MS NODE,NODE...
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/hostlist.h"
#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/gpu_choice.h"
#include "daemon/scheduler/scheduler.h"

namespace gantry {
namespace scheduler_golden_test {

struct GoldenCase {
  std::vector<NodeSnapshot> nodes;
  std::vector<RunningJob> running;
  std::vector<PendingJob> queue;
  SchedulerOptions options;
  std::string expected;
};

uint64_t Number(const std::string& text) {
  uint64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) FAIL("not a number: " << text);
  return value;
}

DatasetKey GoldenDataset(const std::string& name) {
  return DatasetKey{1000, "/datasets/" + name};
}

std::vector<uint32_t> GpuList(const std::string& text) {
  std::vector<uint32_t> gpus;
  const std::vector<std::string> parts =
      absl::StrSplit(text, ',', absl::SkipEmpty());
  for (const std::string& part : parts) {
    gpus.push_back(static_cast<uint32_t>(Number(part)));
  }
  return gpus;
}

void ParseNodes(const std::vector<std::string>& words, GoldenCase& c) {
  absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(words[1]);
  REQUIRE(names.ok());
  NodeSnapshot shape;
  shape.partitions = {"main"};
  std::vector<std::string> switches;
  std::vector<std::string> numa;
  std::vector<std::string> packages;
  for (std::size_t i = 2; i < words.size(); ++i) {
    std::pair<std::string, std::string> kv = absl::StrSplit(words[i], '=');
    const auto& [key, value] = kv;
    if (key == "path") {
      shape.switch_path = absl::StrSplit(value, '/');
    } else if (key == "gpus") {
      shape.gpus_total = static_cast<uint32_t>(Number(value));
    } else if (key == "cpus") {
      shape.cpus_total = static_cast<uint32_t>(Number(value));
    } else if (key == "mem") {
      shape.mem_total_mb = Number(value);
    } else if (key == "hca") {
      shape.gpu_hca = absl::StrSplit(value, ',');
    } else if (key == "switch") {
      switches = absl::StrSplit(value, ',');
    } else if (key == "numa") {
      numa = absl::StrSplit(value, ',');
    } else if (key == "package") {
      packages = absl::StrSplit(value, ',');
    } else if (key == "partitions") {
      shape.partitions = absl::StrSplit(value, ',');
    } else if (key == "spare") {
      shape.hot_spare = true;
    } else if (key == "down") {
      shape.schedulable = false;
    } else if (key == "cache") {
      for (absl::string_view name : absl::StrSplit(value, ',')) {
        shape.cached_datasets.push_back(GoldenDataset(std::string(name)));
      }
      std::sort(shape.cached_datasets.begin(), shape.cached_datasets.end());
    } else {
      FAIL("unknown node key " << key);
    }
  }
  if (!switches.empty() || !numa.empty() || !packages.empty()) {
    std::vector<GpuPlace> places(shape.gpus_total);
    for (std::size_t g = 0; g < places.size(); ++g) {
      if (g < switches.size() && switches[g] != "-") {
        places[g].inner_switch = places[g].outer_switch = switches[g];
      }
      if (g < numa.size())
        places[g].numa_node = static_cast<int>(Number(numa[g]));
      if (g < packages.size()) {
        places[g].package = static_cast<int>(Number(packages[g]));
      }
    }
    shape.gpu_groups = GpuGroups(places);
  }
  shape.cpus_free = shape.cpus_total;
  shape.mem_free_mb = shape.mem_total_mb;
  for (uint32_t g = 0; g < shape.gpus_total; ++g) shape.free_gpus.push_back(g);
  for (const std::string& name : *names) {
    c.nodes.push_back(shape);
    c.nodes.back().name = name;
  }
}

std::size_t NodeIndex(const GoldenCase& c, const std::string& name) {
  for (std::size_t i = 0; i < c.nodes.size(); ++i) {
    if (c.nodes[i].name == name) return i;
  }
  FAIL("unknown node " << name);
  return 0;
}

void ParseRunning(const std::vector<std::string>& words, GoldenCase& c) {
  RunningJob job;
  job.id = JobId(Number(words[1]));
  for (std::size_t i = 2; i < words.size(); ++i) {
    if (absl::StartsWith(words[i], "end=")) {
      job.expected_end_ms = static_cast<int64_t>(Number(words[i].substr(4)));
      continue;
    }
    std::vector<std::string> parts = absl::StrSplit(words[i], ':');
    REQUIRE(parts.size() >= 3);
    NodeShare share;
    share.node = NodeId(NodeIndex(c, parts[0]));
    share.cpus = static_cast<uint32_t>(Number(parts[1]));
    share.gpus = GpuList(parts[2]);
    share.mem_mb = parts.size() > 3 ? Number(parts[3]) : 0;
    NodeSnapshot& node = c.nodes[share.node.index()];
    node.cpus_free -= share.cpus;
    node.mem_free_mb -= share.mem_mb;
    for (uint32_t gpu : share.gpus) {
      node.free_gpus.erase(
          std::find(node.free_gpus.begin(), node.free_gpus.end(), gpu));
    }
    job.shares.push_back(std::move(share));
  }
  c.running.push_back(std::move(job));
}

void ParseJob(const std::vector<std::string>& words, GoldenCase& c) {
  PendingJob job;
  job.id = JobId(Number(words[1]));
  job.partition = "main";
  for (std::size_t i = 2; i < words.size(); ++i) {
    std::pair<std::string, std::string> kv = absl::StrSplit(words[i], '=');
    const auto& [key, value] = kv;
    if (key == "nodes") {
      job.nodes = static_cast<uint32_t>(Number(value));
    } else if (key == "gpus") {
      job.gpus_per_node = static_cast<uint32_t>(Number(value));
    } else if (key == "tasks") {
      job.max_tasks_per_node = static_cast<uint32_t>(Number(value));
    } else if (key == "cpus") {
      job.cpus_per_task = static_cast<uint32_t>(Number(value));
    } else if (key == "mem") {
      job.mem_per_node_mb = Number(value);
    } else if (key == "time") {
      job.time_limit_ms = static_cast<int64_t>(Number(value));
    } else if (key == "switches") {
      std::pair<std::string, std::string> limit = absl::StrSplit(value, '@');
      job.max_switches = static_cast<uint32_t>(Number(limit.first));
      if (!limit.second.empty()) {
        job.switches_deadline_ms = static_cast<int64_t>(Number(limit.second));
      }
    } else if (key == "exclusive") {
      job.exclusive = true;
    } else if (key == "restart") {
      job.is_restart = true;
    } else if (key == "partition") {
      job.partition = value;
    } else if (key == "data") {
      for (absl::string_view item : absl::StrSplit(value, ',')) {
        std::pair<std::string, std::string> name_bytes =
            absl::StrSplit(item, ':');
        job.datasets.push_back(
            {GoldenDataset(name_bytes.first),
             name_bytes.second.empty() ? 0 : Number(name_bytes.second)});
      }
    } else if (key == "locality") {
      REQUIRE((value == "topology" || value == "cache"));
      job.dataset_locality = value == "cache" ? DatasetLocality::kCache
                                              : DatasetLocality::kTopology;
    } else {
      FAIL("unknown job key " << key);
    }
  }
  c.queue.push_back(std::move(job));
}

void ParseOptions(const std::vector<std::string>& words, GoldenCase& c) {
  for (std::size_t i = 1; i < words.size(); ++i) {
    std::pair<std::string, std::string> kv = absl::StrSplit(words[i], '=');
    if (kv.first == "backfill") c.options.backfill = kv.second == "yes";
    if (kv.first == "topology") c.options.topology_aware = kv.second == "yes";
    if (kv.first == "now") c.options.now_ms = Number(kv.second);
    if (kv.first == "unlisted") {
      absl::StatusOr<UnlistedNodes> policy = ParseUnlistedNodes(kv.second);
      REQUIRE(policy.ok());
      c.options.unlisted_nodes = *policy;
    }
  }
}

GoldenCase Load(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  GoldenCase c;
  std::string line;
  bool in_expected = false;
  while (std::getline(in, line)) {
    if (in_expected) {
      if (!line.empty()) absl::StrAppend(&c.expected, line, "\n");
      continue;
    }
    if (line == "--- expected") {
      in_expected = true;
      continue;
    }
    line = line.substr(0, line.find('#'));
    std::vector<std::string> words =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (words.empty()) continue;
    if (words[0] == "nodes") {
      ParseNodes(words, c);
    } else if (words[0] == "running") {
      ParseRunning(words, c);
    } else if (words[0] == "job") {
      ParseJob(words, c);
    } else if (words[0] == "options") {
      ParseOptions(words, c);
    } else {
      FAIL("unknown line: " << line);
    }
  }
  return c;
}

std::string Render(const GoldenCase& c, const ScheduleResult& result) {
  std::string out;
  for (const JobStart& start : result.starts) {
    absl::StrAppend(&out, "start ", start.job_id.value(),
                    " leaves=", start.leaf_switches,
                    start.backfilled ? " backfill" : "");
    for (const NodeShare& share : start.shares) {
      absl::StrAppend(&out, " ", c.nodes[share.node.index()].name, "[",
                      absl::StrJoin(share.gpus, ","), "]");
    }
    absl::StrAppend(&out, "\n");
  }
  for (const JobWait& wait : result.waits) {
    absl::StrAppend(&out, "wait ", wait.job_id.value(), " ", wait.reason,
                    wait.expected_start_ms
                        ? absl::StrCat(" at=", wait.expected_start_ms)
                        : "",
                    "\n");
  }
  for (const Reservation& reservation : result.reservations) {
    std::vector<std::string> names;
    for (NodeId node : reservation.nodes) {
      names.push_back(c.nodes[node.index()].name);
    }
    absl::StrAppend(&out, "reserve ", reservation.job_id.value(),
                    " at=", reservation.start_ms, " ",
                    absl::StrJoin(names, ","), "\n");
  }
  return out;
}

// Lines only in one side, marked like a unified diff.
std::string LineDiff(const std::string& expected, const std::string& actual) {
  std::vector<std::string> want = absl::StrSplit(expected, '\n');
  std::vector<std::string> got = absl::StrSplit(actual, '\n');
  std::string out;
  for (std::size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    const std::string w = i < want.size() ? want[i] : "";
    const std::string g = i < got.size() ? got[i] : "";
    if (w == g) {
      absl::StrAppend(&out, "  ", w, "\n");
    } else {
      if (!w.empty()) absl::StrAppend(&out, "- ", w, "\n");
      if (!g.empty()) absl::StrAppend(&out, "+ ", g, "\n");
    }
  }
  return out;
}

TEST_CASE("scheduler golden cases", "[scheduler][golden]") {
  const std::filesystem::path dir =
      std::filesystem::path(GANTRY_SOURCE_DIR) / "tests/golden/scheduler";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 6);
  for (const std::filesystem::path& file : files) {
    SECTION(file.filename().string()) {
      GoldenCase c = Load(file);
      const std::string actual =
          Render(c, Schedule(c.nodes, c.queue, c.running, c.options));
      INFO(file.filename().string() << " (- expected, + actual):\n"
                                    << LineDiff(c.expected, actual));
      CHECK(actual == c.expected);
    }
  }
}

}  // namespace scheduler_golden_test
}  // namespace gantry
