// The controller's Prometheus metrics: jobs, nodes and GPUs by state, queue
// wait, scheduling pass and store commit latencies, job restarts. The
// Controller calls the update methods where things happen; gantryd serves
// the registry they live in (--metrics-listen).
//
// Threading: update methods are called on the controller's loop thread.
// prometheus-cpp metrics are thread-safe, so the HTTP endpoint's threads
// read them at any time. The pure helpers below are thread-safe (no state).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "daemon/controller/core/goodput.h"
#include "daemon/controller/core/straggler_metrics.h"
#include "daemon/scheduler/job_state_machine.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

// How a node counts in gantry_nodes: whether it can take work, and if not
// why. Exactly one per node, so the states sum to the node count.
enum class NodeMetricState {
  kUp,           // schedulable
  kDrained,      // up, but an admin (or a failure under a job) drained it
  kDegraded,     // up, but its agent reports health problems
  kUnreachable,  // lost its agent; work kept for the grace period
  kDown,
};
inline constexpr size_t kNodeMetricStates = 5;

// How a GPU counts in gantry_gpus. Allocated: held by a job (whatever its
// node's state: the job still owns it). Idle: free on an up node. Down: free
// but unusable (its node is not up, or drained or degraded).
enum class GpuMetricState { kAllocated, kIdle, kDown };
inline constexpr size_t kGpuMetricStates = 3;

inline constexpr size_t kJobStatuses = 9;  // the values of JobStatus

// Label values: lower case ("pending", "node_fail", "up", "allocated").
std::string_view JobStateLabel(JobStatus status);
std::string_view NodeStateLabel(NodeMetricState state);
std::string_view GpuStateLabel(GpuMetricState state);

NodeMetricState ClassifyNode(v1::NodeState state, bool drained, bool healthy);

// Node and GPU counts by state, tallied node by node.
struct NodeCensus {
  std::array<int64_t, kNodeMetricStates> nodes{};
  std::array<int64_t, kGpuMetricStates> gpus{};

  void Add(NodeMetricState state, uint32_t gpus_total, uint32_t gpus_allocated);
};

class ControllerMetrics {
 public:
  // Registers the families in `registry`, which must outlive this object.
  explicit ControllerMetrics(prometheus::Registry& registry);
  ControllerMetrics(const ControllerMetrics&) = delete;
  ControllerMetrics& operator=(const ControllerMetrics&) = delete;

  // Job counts are kept incrementally: every job is added once (loaded or
  // submitted) and moved on each state change.
  void JobAdded(JobStatus status);
  void JobMoved(JobStatus from, JobStatus to);
  // A finished job left the live state (--min-job-age).
  void JobRetired(JobStatus status);

  // How long a job waited in the queue before this attempt started.
  void ObserveQueueWait(double seconds);
  void ObserveSchedulingPass(double seconds);
  // How late the controller's periodic tick ran: for that long the loop
  // was busy with something else (one long turn, or many back to back).
  void ObserveLoopLag(double seconds);
  // The synced write of one group commit.
  void ObserveStoreCommit(double seconds);
  // `reason`: the state machine's word for how the attempt ended
  // (NonZeroExitCode, Signal, NodeFail, Hang, ...): a small fixed set.
  void CountRestart(const std::string& reason);
  // A pre-flight gang check ended after `seconds`, swapping out `swapped`
  // nodes.
  void ObservePreflight(double seconds, size_t swapped);

  // Replaces the node and GPU gauges.
  void PublishNodes(const NodeCensus& census);

  StragglerMetrics& stragglers() { return stragglers_; }
  // Goodput (daemon/controller/goodput.h): the last day's split of the
  // jobs' wall time and its ETTR, replaced; and a job's whole split, added
  // to the per-segment counters when it ends.
  void PublishGoodput(const GoodputTotals& last_day);
  void CountFinishedGoodput(const GoodputTotals& job);

 private:
  std::array<prometheus::Gauge*, kJobStatuses> jobs_{};
  std::array<prometheus::Gauge*, kNodeMetricStates> nodes_{};
  std::array<prometheus::Gauge*, kGpuMetricStates> gpus_{};
  prometheus::Histogram* queue_wait_ = nullptr;
  prometheus::Histogram* scheduling_pass_ = nullptr;
  prometheus::Histogram* loop_lag_ = nullptr;
  prometheus::Gauge* loop_lag_max_ = nullptr;
  prometheus::Histogram* store_commit_ = nullptr;
  prometheus::Family<prometheus::Counter>* restarts_ = nullptr;
  StragglerMetrics stragglers_;
  prometheus::Histogram* preflight_ = nullptr;
  prometheus::Counter* preflight_swapped_ = nullptr;
  std::array<prometheus::Gauge*, kMeasuredGoodputKinds> goodput_last_day_{};
  prometheus::Gauge* ettr_last_day_ = nullptr;
  std::array<prometheus::Counter*, kMeasuredGoodputKinds> goodput_total_{};
};

}  // namespace gantry
