#include "daemon/controller/views/cluster_status.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "absl/strings/str_join.h"
#include "common/hostlist.h"

namespace gantry {
namespace {

constexpr int64_t kHourMs = 3'600'000;
// A drain staged with a node_down or node_degraded event is the same fault;
// both are staged in one loop turn, so their times are this close.
constexpr int64_t kSameFaultMs = 2'000;

bool Busy(const v1::NodeRecord& node) {
  return node.cpus_allocated() > 0 || node.gpus_allocated() > 0 ||
         node.mem_allocated_mb() > 0;
}

// Can the scheduler place new work there (hot spares: restarts only)?
bool TakesWork(const v1::NodeRecord& node) {
  return node.state() == v1::NODE_UP && !node.drained() &&
         node.health_problems().empty();
}

bool AttemptFailed(const v1::AttemptRecord& attempt) {
  return attempt.end_time_ms() != 0 && attempt.end_reason() != "Completed" &&
         attempt.end_reason() != "Cancelled" && !attempt.end_reason().empty();
}

bool IsNodeFailure(const v1::EventRecord& event) {
  return event.kind() == "node_down" || event.kind() == "node_degraded";
}

// Calls `visit(job, attempt, restarted)` for every failed attempt.
template <typename Visit>
void ForEachFailedAttempt(const std::vector<const v1::JobRecord*>& jobs,
                          Visit visit) {
  for (const v1::JobRecord* job : jobs) {
    const int attempts = job->attempts_size();
    for (int i = 0; i < attempts; ++i) {
      const v1::AttemptRecord& attempt = job->attempts(i);
      if (!AttemptFailed(attempt)) continue;
      // A later attempt, or the job back in the queue for one: the restart
      // policy restarted it.
      const bool restarted = i + 1 < attempts || job->state() == v1::PENDING ||
                             job->state() == v1::RUNNING;
      visit(*job, attempt, restarted);
    }
  }
}

void AddNodeIssue(v1::ClusterStatusResponse& status, const v1::NodeRecord& node,
                  std::string_view word) {
  std::string reason;
  if (word == "degraded") {
    reason = absl::StrJoin(node.health_problems(), "; ");
  } else if (word == "drained") {
    reason = node.drain_reason();
  } else {
    reason = node.reason();
    if (node.drained() && !node.drain_reason().empty() &&
        node.drain_reason() != reason) {
      reason += reason.empty() ? "" : "; ";
      reason += "drained: " + node.drain_reason();
    }
  }
  v1::NodeIssue* issue = status.add_node_issues();
  issue->set_node(node.name());
  issue->set_state(std::string(word));
  issue->set_reason(reason);
  issue->set_busy(Busy(node));
}

int IssueRank(const std::string& state) {
  static const char* const kOrder[] = {"down", "unreachable", "degraded",
                                       "drained"};
  for (int i = 0; i < 4; ++i) {
    if (state == kOrder[i]) return i;
  }
  return 4;
}

}  // namespace

std::string_view NodeStatusWord(const v1::NodeRecord& node) {
  if (node.state() == v1::NODE_DOWN) return "down";
  if (node.state() == v1::NODE_UNREACHABLE) return "unreachable";
  if (!node.health_problems().empty()) return "degraded";
  if (node.drained()) return "drained";
  const v1::NodeInventory& inventory = node.inventory();
  const uint32_t gpus = static_cast<uint32_t>(inventory.gpus_size());
  if ((inventory.cpus() > 0 && node.cpus_allocated() >= inventory.cpus()) ||
      (gpus > 0 && node.gpus_allocated() >= gpus)) {
    return "allocated";
  }
  if (Busy(node)) return "mixed";
  return "idle";
}

std::vector<v1::ReasonCount> CountPendingReasons(
    const std::vector<const v1::JobRecord*>& jobs) {
  std::map<std::string, v1::ReasonCount> by_reason;
  for (const v1::JobRecord* job : jobs) {
    if (job->state() != v1::PENDING) continue;
    const std::string reason = job->reason().empty() ? "None" : job->reason();
    v1::ReasonCount& count = by_reason[reason];
    count.set_reason(reason);
    count.set_count(count.count() + 1);
    if (count.example_job_id() == 0 || job->id() < count.example_job_id()) {
      count.set_example_job_id(job->id());
      count.set_example(job->reason_detail());
    }
  }
  std::vector<v1::ReasonCount> counts;
  for (auto& [reason, count] : by_reason) counts.push_back(std::move(count));
  std::stable_sort(counts.begin(), counts.end(),
                   [](const v1::ReasonCount& a, const v1::ReasonCount& b) {
                     return a.count() > b.count();
                   });
  return counts;
}

std::vector<v1::StatusEvent> RecentFailures(
    const std::vector<const v1::JobRecord*>& jobs,
    const std::vector<v1::EventRecord>& node_events, size_t limit) {
  std::vector<v1::StatusEvent> events;
  ForEachFailedAttempt(
      jobs, [&](const v1::JobRecord& job, const v1::AttemptRecord& attempt,
                bool restarted) {
        v1::StatusEvent event;
        event.set_time_ms(attempt.end_time_ms());
        event.set_kind(restarted ? "job_restarted" : "job_failed");
        event.set_job_id(job.id());
        event.set_attempt(attempt.attempt());
        event.set_nodes(
            CompressHostlist({attempt.nodes().begin(), attempt.nodes().end()}));
        event.set_reason(attempt.end_reason());
        event.set_detail(attempt.end_detail());
        events.push_back(std::move(event));
      });
  for (const v1::EventRecord& record : node_events) {
    if (record.kind() == "node_drained") {
      const bool repeated = std::any_of(
          node_events.begin(), node_events.end(),
          [&](const v1::EventRecord& other) {
            return IsNodeFailure(other) && other.node() == record.node() &&
                   std::abs(other.time_ms() - record.time_ms()) <= kSameFaultMs;
          });
      if (repeated) continue;
    }
    v1::StatusEvent event;
    event.set_time_ms(record.time_ms());
    event.set_kind(record.kind());
    event.set_nodes(record.node());
    event.set_detail(record.detail());
    events.push_back(std::move(event));
  }
  const auto newer = [](const v1::StatusEvent& a, const v1::StatusEvent& b) {
    if (a.time_ms() != b.time_ms()) return a.time_ms() > b.time_ms();
    return a.job_id() > b.job_id();
  };
  const size_t kept = std::min(limit, events.size());
  std::partial_sort(events.begin(), events.begin() + kept, events.end(), newer);
  events.resize(kept);
  return events;
}

v1::ClusterStatusResponse BuildClusterStatus(const ClusterStatusInput& input) {
  v1::ClusterStatusResponse status;
  v1::StatusNodeCounts& counts = *status.mutable_node_counts();
  uint32_t gpus_total = 0, gpus_allocated = 0, gpus_idle = 0, gpus_down = 0;
  for (const v1::NodeRecord* node : input.nodes) {
    status.set_nodes_total(status.nodes_total() + 1);
    switch (node->state()) {
      case v1::NODE_UP:
        status.set_nodes_up(status.nodes_up() + 1);
        break;
      case v1::NODE_UNREACHABLE:
        status.set_nodes_unreachable(status.nodes_unreachable() + 1);
        break;
      default:
        status.set_nodes_down(status.nodes_down() + 1);
    }
    const std::string_view word = NodeStatusWord(*node);
    if (word == "idle") counts.set_idle(counts.idle() + 1);
    if (word == "mixed") counts.set_mixed(counts.mixed() + 1);
    if (word == "allocated") counts.set_allocated(counts.allocated() + 1);
    if (word == "drained") counts.set_drained(counts.drained() + 1);
    if (word == "degraded") counts.set_degraded(counts.degraded() + 1);
    if (word == "down") counts.set_down(counts.down() + 1);
    if (word == "unreachable") counts.set_unreachable(counts.unreachable() + 1);
    if (node->simulated()) counts.set_simulated(counts.simulated() + 1);
    if (node->hot_spare()) counts.set_hot_spares(counts.hot_spares() + 1);
    if (word != "idle" && word != "mixed" && word != "allocated") {
      AddNodeIssue(status, *node, word);
    }

    const v1::NodeInventory& inventory = node->inventory();
    status.set_cpus_total(status.cpus_total() + inventory.cpus());
    status.set_cpus_allocated(
        status.cpus_allocated() +
        std::min(node->cpus_allocated(), inventory.cpus()));
    const uint32_t gpus = static_cast<uint32_t>(inventory.gpus_size());
    const uint32_t allocated = std::min(node->gpus_allocated(), gpus);
    gpus_total += gpus;
    gpus_allocated += allocated;
    (TakesWork(*node) ? gpus_idle : gpus_down) += gpus - allocated;

    // Port states are only current for a node whose agent reports.
    if (node->state() != v1::NODE_UP) continue;
    for (const v1::NetworkDevice& device : inventory.network_devices()) {
      if (device.kind() != "openfabrics" || device.role() != "compute") {
        continue;
      }
      for (const v1::HcaPort& port : device.ports()) {
        status.set_hca_ports_total(status.hca_ports_total() + 1);
        if (port.state() == "ACTIVE") continue;
        v1::PortDown* down = status.add_hca_ports_down();
        down->set_node(node->name());
        down->set_device(device.name());
        down->set_port(port.port());
        down->set_state(port.state().empty() ? "UNKNOWN" : port.state());
      }
    }
  }
  std::stable_sort(status.mutable_node_issues()->begin(),
                   status.mutable_node_issues()->end(),
                   [](const v1::NodeIssue& a, const v1::NodeIssue& b) {
                     return IssueRank(a.state()) < IssueRank(b.state());
                   });
  status.set_gpus_total(gpus_total);
  status.set_gpus_allocated(gpus_allocated);
  status.set_gpus_idle(gpus_idle);
  status.set_gpus_down(gpus_down);
  status.set_gpu_utilization_now(gpus_total == 0
                                     ? 0.0
                                     : static_cast<double>(gpus_allocated) /
                                           static_cast<double>(gpus_total));
  if (input.utilization != nullptr) {
    for (const UtilizationHistory::Point& point :
         input.utilization->Series(input.now_ms)) {
      v1::UtilizationPoint* out = status.add_gpu_utilization();
      out->set_start_ms(point.start_ms);
      out->set_allocated_share(point.allocated_share);
    }
    status.set_gpu_utilization_mean(input.utilization->Mean(input.now_ms));
    status.set_utilization_bucket_seconds(
        static_cast<uint32_t>(input.utilization->bucket_ms() / 1000));
  }

  std::map<v1::JobState, uint64_t> by_state;
  for (const v1::JobRecord* job : input.jobs) ++by_state[job->state()];
  for (int value = v1::JobState_MIN; value <= v1::JobState_MAX; ++value) {
    if (!v1::JobState_IsValid(value) || value == v1::JOB_STATE_UNSPECIFIED) {
      continue;
    }
    const auto state = static_cast<v1::JobState>(value);
    v1::JobStateCount* count = status.add_jobs_by_state();
    count->set_state(state);
    count->set_count(by_state[state]);
  }
  status.set_jobs_pending(static_cast<uint32_t>(by_state[v1::PENDING]));
  status.set_jobs_running(static_cast<uint32_t>(by_state[v1::RUNNING]));
  for (v1::ReasonCount& reason : CountPendingReasons(input.jobs)) {
    *status.add_pending_reasons() = std::move(reason);
  }

  for (v1::StatusEvent& event :
       RecentFailures(input.jobs, input.node_events, input.recent_limit)) {
    *status.add_recent_failures() = std::move(event);
  }
  const int64_t hour_ago = input.now_ms - kHourMs;
  ForEachFailedAttempt(
      input.jobs, [&](const v1::JobRecord&, const v1::AttemptRecord& attempt,
                      bool restarted) {
        if (attempt.end_time_ms() < hour_ago) return;
        status.set_job_failures_last_hour(status.job_failures_last_hour() + 1);
        if (restarted) {
          status.set_restarts_last_hour(status.restarts_last_hour() + 1);
        }
      });
  for (const v1::EventRecord& event : input.node_events) {
    if (IsNodeFailure(event) && event.time_ms() >= hour_ago) {
      status.set_node_failures_last_hour(status.node_failures_last_hour() + 1);
    }
  }
  return status;
}

}  // namespace gantry
