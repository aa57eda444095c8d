// Controller: stragglers. Per-node progress of the running attempts (from
// the agents' heartbeats and from ranks' `gantry progress`), judged about
// once a second by the pure rules of daemon/scheduler/straggler_detector.h;
// what is found is shown (gantry job, gantry status, metrics) and, with
// --straggler-policy=swap, acted on at the job's next checkpoint: the
// straggler is drained with the reason and the job restarts from that
// checkpoint without it. Such a restart is gantryd's choice, not a failure
// of the job: it is not charged against --max-restarts. Without a
// placement for the job without it (the scheduler's own test: free nodes
// meeting the job's node list, constraints, size and switch span), a
// straggler is only reported (a restart would land on it again, or wait
// forever). Runs on the loop.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/controller_metrics.h"
#include "daemon/controller/scheduling_input.h"
#include "daemon/scheduler/scheduler.h"

namespace gantry {

namespace {

constexpr int64_t kCheckEveryMs = 1000;

std::string Describe(const StragglerFinding& finding, uint64_t job_id) {
  return absl::StrFormat(
      "straggler: %.1fx slower than peers in job %d (step %.2f s, peers' "
      "median %.2f s)",
      finding.slowdown, job_id, finding.step_seconds,
      finding.peer_median_seconds);
}

}  // namespace

void Controller::RecordRankProgress(const std::string& node,
                                    const v1::Heartbeat& heartbeat) {
  if (options_.straggler_response == StragglerResponse::kOff) return;
  // Progress is timed on the monotonic clock (JobProgress compares ranks'
  // report times with CheckStragglers' now); the record keeps a date.
  const int64_t monotonic = MonotonicMs(clock_);
  for (const v1::RankProgressReport& report : heartbeat.rank_progress()) {
    auto it = jobs_.find(report.job_id());
    if (it == jobs_.end()) continue;
    JobRuntime& job = it->second;
    if (job.record.state() != v1::RUNNING ||
        job.record.attempt() != report.attempt() ||
        !job.occupied_nodes.count(node) || report.progress().step() < 0) {
      continue;
    }
    auto entry =
        progress_.try_emplace(job.record.id(), job.record.attempt()).first;
    if (entry->second.attempt() != job.record.attempt()) {
      entry->second = JobProgress(job.record.attempt());
    }
    if (entry->second.RecordNode(node, report.progress(), monotonic)) {
      job.record.set_last_progress_ms(clock_.NowMs());  // in memory, as ever
      job.quiet_for.Mark(job.record.last_progress_ms(), clock_);
      NoteProgress(job, /*checkpoint=*/false);  // the attempt's first
    }
  }
}

absl::Status Controller::RecordRankReport(
    JobRuntime& job, const v1::ReportProgressRequest& request) {
  if (!request.has_rank() || request.step() < 0 ||
      options_.straggler_response == StragglerResponse::kOff) {
    return absl::OkStatus();
  }
  const v1::JobRecord& record = job.record;
  const v1::NodeAllocation* holder = nullptr;
  uint32_t ranks = 0;
  for (const v1::NodeAllocation& share : record.allocation()) {
    ranks = std::max(ranks, share.first_rank() + share.rank_count());
    if (request.rank() >= share.first_rank() &&
        request.rank() < share.first_rank() + share.rank_count()) {
      holder = &share;
    }
  }
  if (holder == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", record.id(), " has no rank ", request.rank(),
                     ranks > 0 ? absl::StrCat(" (ranks 0-", ranks - 1, ")")
                               : std::string()));
  }
  auto entry = progress_.try_emplace(record.id(), record.attempt()).first;
  if (entry->second.attempt() != record.attempt()) {
    entry->second = JobProgress(record.attempt());
  }
  entry->second.RecordRank(holder->node(), request.rank(), request.step(),
                           request.step_seconds(), MonotonicMs(clock_));
  return absl::OkStatus();
}

void Controller::CheckStragglers(int64_t monotonic_ms) {
  if (monotonic_ms < next_straggler_check_ms_) return;
  next_straggler_check_ms_ = monotonic_ms + kCheckEveryMs;
  // Reports may be a few heartbeats old without the node being stalled.
  const int64_t slack_ms = 2 * options_.heartbeat_interval_ms + kCheckEveryMs;
  std::map<uint64_t, v1::JobStragglers> published;
  for (auto it = progress_.begin(); it != progress_.end();) {
    auto job_it = jobs_.find(it->first);
    if (job_it == jobs_.end() || job_it->second.record.state() != v1::RUNNING ||
        job_it->second.record.attempt() != it->second.attempt()) {
      it = progress_.erase(it);
      continue;
    }
    JobRuntime& job = job_it->second;
    JobProgress& progress = it->second;
    progress.Check(monotonic_ms, options_.straggler_policy, slack_ms);
    for (const StragglerFinding& finding : progress.Stragglers()) {
      if (!progress.FirstNotice(finding.node)) continue;
      const std::string detail = Describe(finding, job.record.id());
      StageEvent(job.record.id(), finding.node, "straggler", detail);
      log::Warn("straggler found",
                {{"job", job.record.id()},
                 {"attempt", job.record.attempt()},
                 {"node", finding.node},
                 {"rank", progress.SlowestRank(finding.node)},
                 {"slowdown", finding.slowdown}});
    }
    if (std::optional<v1::JobStragglers> view = StragglerView(job, false)) {
      published[it->first] = *std::move(view);
    }
    ++it;
  }
  if (options_.metrics) options_.metrics->stragglers().Publish(published);
}

size_t Controller::SwappableStragglers(
    const JobRuntime& job,
    const std::vector<StragglerFinding>& stragglers) const {
  if (stragglers.empty()) return 0;
  const v1::JobRecord& record = job.record;
  std::vector<const std::string*> names;
  std::vector<NodeSnapshot> snapshot = NodeSnapshots(names);
  std::map<std::string_view, NodeSnapshot*> by_name;
  for (NodeSnapshot& node : snapshot) by_name.emplace(node.name, &node);
  // Once it restarts, what the job holds now is free again.
  for (const v1::NodeAllocation& held : record.allocation()) {
    auto found = by_name.find(held.node());
    if (found == by_name.end()) continue;
    NodeSnapshot& node = *found->second;
    node.cpus_free = std::min(node.cpus_total, node.cpus_free + held.cpus());
    node.mem_free_mb =
        std::min(node.mem_total_mb, node.mem_free_mb + held.mem_mb());
    for (uint32_t gpu : held.gpu_indices()) node.free_gpus.push_back(gpu);
    std::sort(node.free_gpus.begin(), node.free_gpus.end());
    node.free_gpus.erase(
        std::unique(node.free_gpus.begin(), node.free_gpus.end()),
        node.free_gpus.end());
  }
  // Every straggler drained (remembering whether it could take work).
  std::vector<std::pair<NodeSnapshot*, bool>> drained;
  for (const StragglerFinding& finding : stragglers) {
    auto found = by_name.find(finding.node);
    NodeSnapshot* node = found == by_name.end() ? nullptr : found->second;
    drained.emplace_back(node, node != nullptr && node->schedulable);
    if (node != nullptr) node->schedulable = false;
  }
  // The scheduler's own test, with everything the job asks of its nodes
  // (node list, exclusions, features, GPU type, switch span, spares). The
  // most of them (slowest first) the job can restart without now: the
  // fastest is given back while it could not.
  PendingJob pending = PendingJobOf(
      record, ParsedConstraintOf(record.spec().constraint(), job.constraint));
  pending.is_restart = true;
  SchedulerOptions options;
  options.backfill = false;
  options.now_ms = clock_.NowMs();
  options.unlisted_nodes = options_.unlisted_nodes;
  size_t swappable = drained.size();
  while (swappable > 0 &&
         Schedule(snapshot, {pending}, {}, options).starts.empty()) {
    --swappable;
    auto [node, schedulable] = drained[swappable];
    if (node != nullptr) node->schedulable = schedulable;
  }
  return swappable;
}

std::optional<v1::JobStragglers> Controller::StragglerView(
    const JobRuntime& job, bool with_nodes) const {
  auto it = progress_.find(job.record.id());
  if (it == progress_.end() || it->second.attempt() != job.record.attempt() ||
      job.record.state() != v1::RUNNING) {
    return std::nullopt;
  }
  const JobProgress& progress = it->second;
  v1::JobStragglers view;
  view.set_job_id(job.record.id());
  view.set_attempt(job.record.attempt());
  const std::vector<StragglerFinding> stragglers = progress.Stragglers();
  // Looked for only when there is something to swap: a placement test.
  const size_t swappable =
      options_.straggler_response == StragglerResponse::kSwap &&
              !stragglers.empty()
          ? SwappableStragglers(job, stragglers)
          : 0;
  for (size_t i = 0; i < stragglers.size(); ++i) {
    const StragglerFinding& finding = stragglers[i];
    v1::Straggler& out = *view.add_stragglers();
    out.set_node(finding.node);
    out.set_rank(progress.SlowestRank(finding.node));
    out.set_step_seconds(finding.step_seconds);
    out.set_peer_median_seconds(finding.peer_median_seconds);
    out.set_slowdown(finding.slowdown);
    out.set_slow_since_ms(finding.slow_since_ms);
    if (options_.straggler_response != StragglerResponse::kSwap) {
      out.set_action("report");
    } else if (i < swappable) {
      out.set_action("swap at the next checkpoint");
    } else {
      out.set_action(
          "report (the job could not restart without it now: no free node "
          "meets its node list, constraints and size)");
    }
  }
  if (with_nodes) {
    for (v1::NodeProgress& node : progress.Nodes()) {
      *view.add_nodes() = std::move(node);
    }
  }
  return view;
}

void Controller::SwapStragglersAtCheckpoint(JobRuntime& job) {
  if (options_.straggler_response != StragglerResponse::kSwap) return;
  v1::JobRecord& record = job.record;
  auto it = progress_.find(record.id());
  if (it == progress_.end() || it->second.attempt() != record.attempt() ||
      record.state() != v1::RUNNING) {
    return;
  }
  // Found before this checkpoint (at the last check): the work up to it is
  // kept, so swapping costs only the restart.
  std::vector<StragglerFinding> stragglers = it->second.Stragglers();
  // Only as many as the job can restart without right now: a swap that
  // drained a node the job's --nodelist holds, or left it no placement,
  // would leave it pending forever.
  stragglers.resize(SwappableStragglers(job, stragglers));
  std::vector<std::string> swapped;
  for (const StragglerFinding& finding : stragglers) {
    auto node = nodes_.find(finding.node);
    if (node == nodes_.end() || !job.occupied_nodes.count(finding.node))
      continue;
    if (!node->second.record.drained()) {
      DrainNode(node->second, Describe(finding, record.id()));
    }
    swapped.push_back(
        absl::StrFormat("%s (%.1fx slower)", finding.node, finding.slowdown));
  }
  if (swapped.empty()) return;
  const std::string detail = absl::StrCat("straggler swap at checkpoint ",
                                          record.latest_checkpoint().path(),
                                          ": ", absl::StrJoin(swapped, ", "));
  JobEvent event{JobEvent::Kind::kRequeueRequest};
  event.requeue = true;
  if (absl::Status status = ApplyEvent(job, event, detail); !status.ok()) {
    log::Error("straggler swap: cannot requeue the job",
               {{"job", record.id()}, {"error", status.ToString()}});
    return;
  }
  // gantryd's choice, not the job's failure: no charge.
  record.set_uncharged_attempts(record.uncharged_attempts() + 1);
  if (record.attempts_size() > 0) {
    record.mutable_attempts(record.attempts_size() - 1)
        ->set_end_reason("Straggler");
  }
  StageJob(job);
  StageEvent(record.id(), "", "straggler_swap", detail);
  log::Warn("stragglers swapped out",
            {{"job", record.id()}, {"detail", detail}});
  if (options_.metrics) {
    options_.metrics->stragglers().CountSwaps(
        static_cast<uint32_t>(swapped.size()));
  }
  progress_.erase(it);
}

}  // namespace gantry
