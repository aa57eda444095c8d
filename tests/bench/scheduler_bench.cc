// Benchmark of the scheduler core (issue #4 point 6): one scheduling pass
// over 10,000 pending jobs on 4,096 nodes x 8 GPUs in a 3-level fat tree
// (32 nodes per leaf, 8 leaves per spine, 16 spines under one core), and a
// single 512-node gang decision on a fragmented cluster. Prints median and
// p99 wall time of repeated runs on the same input. Targets on a 2-core
// machine: pass < 10 ms, gang decision < 1 ms.
//
// Usage: gantry-scheduler-bench [repetitions]
#include <sys/resource.h>
#include <time.h>
#include <algorithm>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "daemon/scheduler/scheduler.h"

namespace gantry {
namespace {

constexpr uint32_t kNodes = 4096;
constexpr uint32_t kGpus = 8;
constexpr uint32_t kNodesPerLeaf = 32;
constexpr uint32_t kLeavesPerSpine = 8;

std::vector<NodeSnapshot> IdleCluster() {
  std::vector<NodeSnapshot> nodes(kNodes);
  for (uint32_t i = 0; i < kNodes; ++i) {
    NodeSnapshot& n = nodes[i];
    n.name = "n" + std::to_string(i);
    n.partitions = {"main"};
    n.cpus_total = n.cpus_free = 128;
    n.gpus_total = kGpus;
    for (uint32_t g = 0; g < kGpus; ++g) {
      n.free_gpus.push_back(g);
      n.gpu_hca.push_back("mlx5_" + std::to_string(g / 2));
    }
    n.mem_total_mb = n.mem_free_mb = 1'000'000;
    const uint32_t leaf = i / kNodesPerLeaf;
    n.switch_path = {"leaf" + std::to_string(leaf),
                     "spine" + std::to_string(leaf / kLeavesPerSpine), "core"};
  }
  return nodes;
}

// Fills nodes with running jobs until about `busy` of the GPUs are used.
std::vector<RunningJob> Occupy(std::vector<NodeSnapshot>& nodes, double busy,
                               std::mt19937& rng) {
  std::vector<RunningJob> running;
  std::uniform_int_distribution<uint32_t> gpus(1, kGpus);
  std::uniform_int_distribution<int64_t> end(60'000, 86'400'000);
  std::bernoulli_distribution take(busy);
  uint64_t id = 1'000'000;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    NodeSnapshot& n = nodes[i];
    while (!n.free_gpus.empty() && take(rng)) {
      const uint32_t count = std::min<uint32_t>(
          gpus(rng), static_cast<uint32_t>(n.free_gpus.size()));
      NodeShare share{NodeId(i), 4 * count, {}, 0};
      share.gpus.assign(n.free_gpus.begin(), n.free_gpus.begin() + count);
      n.free_gpus.erase(n.free_gpus.begin(), n.free_gpus.begin() + count);
      n.cpus_free -= share.cpus;
      running.push_back({JobId(id++), {share}, end(rng), false});
    }
  }
  return running;
}

std::vector<PendingJob> Queue(std::size_t count, std::mt19937& rng) {
  std::vector<PendingJob> queue;
  std::uniform_real_distribution<double> kind(0, 1);
  std::uniform_int_distribution<uint32_t> small_gpus(1, kGpus);
  std::uniform_int_distribution<uint32_t> mid_nodes(2, 32);
  std::uniform_int_distribution<uint32_t> big_nodes(64, 512);
  std::uniform_int_distribution<int64_t> limit(600'000, 86'400'000);
  for (std::size_t i = 0; i < count; ++i) {
    PendingJob j;
    j.id = JobId(i + 1);
    j.partition = "main";
    j.user = "u" + std::to_string(i % 50);
    j.submit_time_ms = static_cast<int64_t>(i);
    j.time_limit_ms = limit(rng);
    j.cpus_per_task = 4;
    const double k = kind(rng);
    if (k < 0.5) {
      j.gpus_per_node = small_gpus(rng);
      j.max_tasks_per_node = j.gpus_per_node;
    } else if (k < 0.8) {
      j.gpus_per_node = kGpus;
      j.max_tasks_per_node = kGpus;
    } else if (k < 0.95) {
      j.nodes = mid_nodes(rng);
      j.gpus_per_node = kGpus;
      j.max_tasks_per_node = kGpus;
    } else {
      j.nodes = big_nodes(rng);
      j.gpus_per_node = kGpus;
      j.max_tasks_per_node = kGpus;
    }
    queue.push_back(j);
  }
  return queue;
}

struct Stats {
  double median_ms = 0;
  double p99_ms = 0;
  // The same for the CPU time of this thread: the work of a pass is the
  // same every time (same input, deterministic), so a wall-clock p99 far
  // above the CPU p99 is time the thread spent off the CPU.
  double cpu_median_ms = 0;
  double cpu_p99_ms = 0;
  double minor_faults_per_run = 0;
};

double ThreadCpuMs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

template <typename F>
Stats Measure(int repetitions, F&& run) {
  std::vector<double> ms, cpu_ms;
  const long faults_before = MinorFaults();
  for (int r = 0; r < repetitions; ++r) {
    const double cpu_start = ThreadCpuMs();
    const auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    cpu_ms.push_back(ThreadCpuMs() - cpu_start);
  }
  const double faults =
      static_cast<double>(MinorFaults() - faults_before) / repetitions;
  const auto at = [](std::vector<double>& values, double q) {
    std::sort(values.begin(), values.end());
    return values[std::min(
        values.size() - 1,
        static_cast<std::size_t>(q * (values.size() - 1) + 0.5))];
  };
  return {at(ms, 0.5), at(ms, 0.99), at(cpu_ms, 0.5), at(cpu_ms, 0.99), faults};
}

int Main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::atoi(argv[1]) : 50;
  std::mt19937 rng(4);

  // A pass: a busy cluster (about 70% of GPUs held) and a long queue.
  std::vector<NodeSnapshot> nodes = IdleCluster();
  std::vector<RunningJob> running = Occupy(nodes, 0.7, rng);
  const std::vector<PendingJob> queue = Queue(10'000, rng);
  SchedulerOptions options;
  options.now_ms = 0;
  std::size_t starts = 0, waits = 0;
  const Stats pass = Measure(repetitions, [&] {
    ScheduleResult r = Schedule(nodes, queue, running, options);
    starts = r.starts.size();
    waits = r.waits.size();
  });
  std::printf(
      "pass: 10000 pending, %u nodes x %u GPUs, %zu running: median %.2f ms, "
      "p99 %.2f ms (%zu started, %zu waiting)\n"
      "      thread CPU time: median %.2f ms, p99 %.2f ms; %.0f minor page "
      "faults per pass\n",
      kNodes, kGpus, running.size(), pass.median_ms, pass.p99_ms, starts, waits,
      pass.cpu_median_ms, pass.cpu_p99_ms, pass.minor_faults_per_run);

  // One 512-node gang on a fragmented cluster (about 40% of GPUs held).
  std::vector<NodeSnapshot> fragmented = IdleCluster();
  Occupy(fragmented, 0.4, rng);
  PendingJob gang;
  gang.id = JobId(1);
  gang.partition = "main";
  gang.nodes = 512;
  gang.gpus_per_node = 4;
  gang.max_tasks_per_node = 4;
  gang.cpus_per_task = 4;
  uint32_t leaves = 0;
  const Stats decision = Measure(repetitions * 4, [&] {
    ScheduleResult r = Schedule(fragmented, {gang}, {}, options);
    leaves = r.starts.empty() ? 0 : r.starts[0].leaf_switches;
  });
  std::printf(
      "gang: one 512-node job (4 GPUs per node): median %.3f ms, p99 %.3f ms "
      "(%s, %u leaf switches)\n"
      "      thread CPU time: median %.3f ms, p99 %.3f ms\n",
      decision.median_ms, decision.p99_ms, leaves ? "placed" : "not placed",
      leaves, decision.cpu_median_ms, decision.cpu_p99_ms);
  return 0;
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) { return gantry::Main(argc, argv); }
