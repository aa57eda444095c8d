#include "daemon/controller/core/controller_metrics.h"

#include <algorithm>

namespace gantry {
namespace {

constexpr JobStatus kAllJobStatuses[kJobStatuses] = {
    JobStatus::kPending,  JobStatus::kRunning,     JobStatus::kCompleted,
    JobStatus::kFailed,   JobStatus::kCancelled,   JobStatus::kTimeout,
    JobStatus::kNodeFail, JobStatus::kOutOfMemory, JobStatus::kDeadline};

size_t Index(JobStatus status) { return static_cast<size_t>(status); }

}  // namespace

std::string_view JobStateLabel(JobStatus status) {
  switch (status) {
    case JobStatus::kPending:
      return "pending";
    case JobStatus::kRunning:
      return "running";
    case JobStatus::kCompleted:
      return "completed";
    case JobStatus::kFailed:
      return "failed";
    case JobStatus::kCancelled:
      return "cancelled";
    case JobStatus::kTimeout:
      return "timeout";
    case JobStatus::kNodeFail:
      return "node_fail";
    case JobStatus::kOutOfMemory:
      return "out_of_memory";
    case JobStatus::kDeadline:
      return "deadline";
  }
  return "unknown";
}

std::string_view NodeStateLabel(NodeMetricState state) {
  switch (state) {
    case NodeMetricState::kUp:
      return "up";
    case NodeMetricState::kDrained:
      return "drained";
    case NodeMetricState::kDegraded:
      return "degraded";
    case NodeMetricState::kUnreachable:
      return "unreachable";
    case NodeMetricState::kDown:
      return "down";
  }
  return "unknown";
}

std::string_view GpuStateLabel(GpuMetricState state) {
  switch (state) {
    case GpuMetricState::kAllocated:
      return "allocated";
    case GpuMetricState::kIdle:
      return "idle";
    case GpuMetricState::kDown:
      return "down";
  }
  return "unknown";
}

NodeMetricState ClassifyNode(v1::NodeState state, bool drained, bool healthy) {
  switch (state) {
    case v1::NODE_UP:
      if (drained) return NodeMetricState::kDrained;
      if (!healthy) return NodeMetricState::kDegraded;
      return NodeMetricState::kUp;
    case v1::NODE_UNREACHABLE:
      return NodeMetricState::kUnreachable;
    default:
      return NodeMetricState::kDown;
  }
}

void NodeCensus::Add(NodeMetricState state, uint32_t gpus_total,
                     uint32_t gpus_allocated) {
  ++nodes[static_cast<size_t>(state)];
  const uint32_t allocated = std::min(gpus_allocated, gpus_total);
  const uint32_t free = gpus_total - allocated;
  gpus[static_cast<size_t>(GpuMetricState::kAllocated)] += allocated;
  gpus[static_cast<size_t>(state == NodeMetricState::kUp
                               ? GpuMetricState::kIdle
                               : GpuMetricState::kDown)] += free;
}

ControllerMetrics::ControllerMetrics(prometheus::Registry& registry)
    : stragglers_(registry) {
  auto& jobs = prometheus::BuildGauge()
                   .Name("gantry_jobs")
                   .Help("Jobs the controller holds, by state")
                   .Register(registry);
  // Every state is present from the start, so a query for one that has no
  // job yet reads 0 rather than nothing.
  for (JobStatus status : kAllJobStatuses) {
    jobs_[Index(status)] =
        &jobs.Add({{"state", std::string(JobStateLabel(status))}});
  }
  auto& nodes = prometheus::BuildGauge()
                    .Name("gantry_nodes")
                    .Help("Nodes by state (up means schedulable)")
                    .Register(registry);
  for (size_t i = 0; i < kNodeMetricStates; ++i) {
    nodes_[i] = &nodes.Add({{"state", std::string(NodeStateLabel(
                                          static_cast<NodeMetricState>(i)))}});
  }
  auto& gpus = prometheus::BuildGauge()
                   .Name("gantry_gpus")
                   .Help("GPUs by state; their sum is every GPU of every node")
                   .Register(registry);
  for (size_t i = 0; i < kGpuMetricStates; ++i) {
    gpus_[i] = &gpus.Add({{"state", std::string(GpuStateLabel(
                                        static_cast<GpuMetricState>(i)))}});
  }
  queue_wait_ =
      &prometheus::BuildHistogram()
           .Name("gantry_job_queue_wait_seconds")
           .Help(
               "Time from entering the queue (submission, or the end of "
               "the previous attempt) to starting to run")
           .Register(registry)
           .Add({}, prometheus::Histogram::BucketBoundaries{
                        0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200,
                        21600, 86400});
  scheduling_pass_ =
      &prometheus::BuildHistogram()
           .Name("gantry_scheduling_pass_duration_seconds")
           .Help("Time one scheduling pass takes on the controller loop")
           .Register(registry)
           .Add({},
                prometheus::Histogram::BucketBoundaries{
                    0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5});
  loop_lag_ =
      &prometheus::BuildHistogram()
           .Name("gantry_controller_loop_lag_seconds")
           .Help(
               "How late the controller's 250 ms tick ran: how long the loop "
               "was held by other work when the tick was due")
           .Register(registry)
           .Add({}, prometheus::Histogram::BucketBoundaries{
                        0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
                        5, 10});
  loop_lag_max_ = &prometheus::BuildGauge()
                       .Name("gantry_controller_loop_lag_max_seconds")
                       .Help(
                           "The longest gantry_controller_loop_lag_seconds "
                           "since gantryd started")
                       .Register(registry)
                       .Add({});
  store_commit_ =
      &prometheus::BuildHistogram()
           .Name("gantry_store_commit_duration_seconds")
           .Help(
               "Time of the synced state database write of one group "
               "commit")
           .Register(registry)
           .Add({}, prometheus::Histogram::BucketBoundaries{
                        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                        0.25, 0.5, 1});
  restarts_ = &prometheus::BuildCounter()
                   .Name("gantry_job_restarts_total")
                   .Help(
                       "Failed job attempts requeued for another attempt, "
                       "by how the attempt ended")
                   .Register(registry);
  preflight_ = &prometheus::BuildHistogram()
                    .Name("gantry_preflight_duration_seconds")
                    .Help(
                        "Time of a job attempt's pre-flight gang check, "
                        "from its start to its verdict")
                    .Register(registry)
                    .Add({}, prometheus::Histogram::BucketBoundaries{
                                 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120});
  preflight_swapped_ =
      &prometheus::BuildCounter()
           .Name("gantry_preflight_nodes_swapped_total")
           .Help("Nodes a pre-flight gang check swapped out of a job")
           .Register(registry)
           .Add({});
  auto& last_day =
      prometheus::BuildGauge()
          .Name("gantry_goodput_last_day_seconds")
          .Help(
              "Wall time of the jobs over the last day, by what it went "
              "to: queued, preflight, starting, productive, lost, "
              "detecting, recovering")
          .Register(registry);
  auto& finished =
      prometheus::BuildCounter()
          .Name("gantry_goodput_seconds_total")
          .Help("Wall time of the jobs that ended, by what it went to")
          .Register(registry);
  for (size_t i = 0; i < kMeasuredGoodputKinds; ++i) {
    const std::string segment(GoodputKindName(static_cast<GoodputKind>(i)));
    goodput_last_day_[i] = &last_day.Add({{"segment", segment}});
    goodput_total_[i] = &finished.Add({{"segment", segment}});
  }
  ettr_last_day_ =
      &prometheus::BuildGauge()
           .Name("gantry_ettr_last_day")
           .Help(
               "Effective training time ratio over the last day: productive "
               "time over the jobs' wall time after they first started")
           .Register(registry)
           .Add({});
}

void ControllerMetrics::JobAdded(JobStatus status) {
  jobs_[Index(status)]->Increment();
}

void ControllerMetrics::JobMoved(JobStatus from, JobStatus to) {
  if (from == to) return;
  jobs_[Index(from)]->Decrement();
  jobs_[Index(to)]->Increment();
}

void ControllerMetrics::JobRetired(JobStatus status) {
  jobs_[Index(status)]->Decrement();
}

void ControllerMetrics::ObserveQueueWait(double seconds) {
  queue_wait_->Observe(seconds);
}

void ControllerMetrics::ObserveSchedulingPass(double seconds) {
  scheduling_pass_->Observe(seconds);
}

void ControllerMetrics::ObserveLoopLag(double seconds) {
  loop_lag_->Observe(seconds);
  if (seconds > loop_lag_max_->Value()) loop_lag_max_->Set(seconds);
}

void ControllerMetrics::ObserveStoreCommit(double seconds) {
  store_commit_->Observe(seconds);
}

void ControllerMetrics::CountRestart(const std::string& reason) {
  restarts_->Add({{"reason", reason}}).Increment();
}

void ControllerMetrics::ObservePreflight(double seconds, size_t swapped) {
  preflight_->Observe(seconds);
  preflight_swapped_->Increment(static_cast<double>(swapped));
}

void ControllerMetrics::PublishGoodput(const GoodputTotals& last_day) {
  for (size_t i = 0; i < kMeasuredGoodputKinds; ++i) {
    goodput_last_day_[i]->Set(static_cast<double>(last_day.ms[i]) / 1000.0);
  }
  ettr_last_day_->Set(last_day.Ettr());
}

void ControllerMetrics::CountFinishedGoodput(const GoodputTotals& job) {
  for (size_t i = 0; i < kMeasuredGoodputKinds; ++i) {
    if (job.ms[i] > 0) {
      goodput_total_[i]->Increment(static_cast<double>(job.ms[i]) / 1000.0);
    }
  }
}

void ControllerMetrics::PublishNodes(const NodeCensus& census) {
  for (size_t i = 0; i < kNodeMetricStates; ++i) {
    nodes_[i]->Set(static_cast<double>(census.nodes[i]));
  }
  for (size_t i = 0; i < kGpuMetricStates; ++i) {
    gpus_[i]->Set(static_cast<double>(census.gpus[i]));
  }
}

}  // namespace gantry
