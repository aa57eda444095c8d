#include "daemon/controller/features/stragglers/straggler_feature.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "daemon/controller/core/controller_metrics.h"

namespace gantry {

namespace {

std::string Describe(const StragglerFinding& finding, uint64_t job_id) {
  return absl::StrFormat(
      "straggler: %.1fx slower than peers in job %d (step %.2f s, peers' "
      "median %.2f s)",
      finding.slowdown, job_id, finding.step_seconds,
      finding.peer_median_seconds);
}

}  // namespace

StragglerFeature::StragglerFeature(FeatureContext& context,
                                   StragglerSettings settings)
    : context_(context), settings_(settings) {}

JobProgress& StragglerFeature::ProgressOf(const v1::JobRecord& job) {
  auto entry = progress_.try_emplace(job.id(), job.attempt()).first;
  if (entry->second.attempt() != job.attempt()) {
    entry->second = JobProgress(job.attempt());
  }
  return entry->second;
}

void StragglerFeature::OnHeartbeat(const std::string& node,
                                   const v1::Heartbeat& heartbeat) {
  if (settings_.response == StragglerResponse::kOff) return;
  // Progress is timed on the monotonic clock (JobProgress compares ranks'
  // report times with Check's now).
  const int64_t monotonic = MonotonicMs(context_.clock());
  for (const v1::RankProgressReport& report : heartbeat.rank_progress()) {
    const v1::JobRecord* job = context_.FindJob(report.job_id());
    if (job == nullptr || job->state() != v1::RUNNING ||
        job->attempt() != report.attempt() ||
        !context_.JobOccupies(job->id(), node) ||
        report.progress().step() < 0) {
      continue;
    }
    if (ProgressOf(*job).RecordNode(node, report.progress(), monotonic)) {
      context_.NoteJobProgress(job->id(), /*checkpoint=*/false);
    }
  }
}

absl::Status StragglerFeature::OnProgressReport(
    const v1::JobRecord& job, const v1::ReportProgressRequest& report) {
  if (!report.has_rank() || report.step() < 0 ||
      settings_.response == StragglerResponse::kOff) {
    return absl::OkStatus();
  }
  const v1::NodeAllocation* holder = nullptr;
  uint32_t ranks = 0;
  for (const v1::NodeAllocation& share : job.allocation()) {
    ranks = std::max(ranks, share.first_rank() + share.rank_count());
    if (report.rank() >= share.first_rank() &&
        report.rank() < share.first_rank() + share.rank_count()) {
      holder = &share;
    }
  }
  if (holder == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", job.id(), " has no rank ", report.rank(),
                     ranks > 0 ? absl::StrCat(" (ranks 0-", ranks - 1, ")")
                               : std::string()));
  }
  ProgressOf(job).RecordRank(holder->node(), report.rank(), report.step(),
                             report.step_seconds(),
                             MonotonicMs(context_.clock()));
  return absl::OkStatus();
}

void StragglerFeature::OnTick(uint64_t /*tick*/) {
  Check(MonotonicMs(context_.clock()));
}

void StragglerFeature::Check(int64_t monotonic_ms) {
  if (monotonic_ms < next_check_ms_) return;
  next_check_ms_ = monotonic_ms + kCheckEveryMs;
  // Reports may be a few heartbeats old without the node being stalled.
  const int64_t slack_ms = 2 * settings_.heartbeat_interval_ms + kCheckEveryMs;
  std::map<uint64_t, v1::JobStragglers> published;
  for (auto it = progress_.begin(); it != progress_.end();) {
    const v1::JobRecord* job = context_.FindJob(it->first);
    if (job == nullptr || job->state() != v1::RUNNING ||
        job->attempt() != it->second.attempt()) {
      it = progress_.erase(it);
      continue;
    }
    JobProgress& progress = it->second;
    progress.Check(monotonic_ms, settings_.policy, slack_ms);
    for (const StragglerFinding& finding : progress.Stragglers()) {
      if (!progress.FirstNotice(finding.node)) continue;
      context_.RecordEvent(job->id(), finding.node, "straggler",
                           Describe(finding, job->id()));
      log::Warn("straggler found",
                {{"job", job->id()},
                 {"attempt", job->attempt()},
                 {"node", finding.node},
                 {"rank", progress.SlowestRank(finding.node)},
                 {"slowdown", finding.slowdown}});
    }
    if (std::optional<v1::JobStragglers> view = View(*job, false)) {
      published[it->first] = *std::move(view);
    }
    ++it;
  }
  if (ControllerMetrics* metrics = context_.metrics()) {
    metrics->stragglers().Publish(published);
  }
}

size_t StragglerFeature::Swappable(
    const v1::JobRecord& job,
    const std::vector<StragglerFinding>& stragglers) const {
  if (stragglers.empty()) return 0;
  std::vector<std::string> nodes;
  nodes.reserve(stragglers.size());
  for (const StragglerFinding& finding : stragglers) {
    nodes.push_back(finding.node);
  }
  // The most of them (slowest first) the job can restart without now: the
  // fastest is given back while it could not.
  return context_.RestartableWithout(job.id(), nodes);
}

std::optional<v1::JobStragglers> StragglerFeature::View(
    const v1::JobRecord& job, bool with_nodes) const {
  auto it = progress_.find(job.id());
  if (it == progress_.end() || it->second.attempt() != job.attempt() ||
      job.state() != v1::RUNNING) {
    return std::nullopt;
  }
  const JobProgress& progress = it->second;
  v1::JobStragglers view;
  view.set_job_id(job.id());
  view.set_attempt(job.attempt());
  const std::vector<StragglerFinding> stragglers = progress.Stragglers();
  // Looked for only when there is something to swap: a placement test.
  const bool swap = settings_.response == StragglerResponse::kSwap;
  const size_t swappable = swap ? Swappable(job, stragglers) : 0;
  for (size_t i = 0; i < stragglers.size(); ++i) {
    const StragglerFinding& finding = stragglers[i];
    v1::Straggler& out = *view.add_stragglers();
    out.set_node(finding.node);
    out.set_rank(progress.SlowestRank(finding.node));
    out.set_step_seconds(finding.step_seconds);
    out.set_peer_median_seconds(finding.peer_median_seconds);
    out.set_slowdown(finding.slowdown);
    out.set_slow_since_ms(finding.slow_since_ms);
    if (!swap) {
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

void StragglerFeature::FillStatus(v1::ClusterStatusResponse& status) const {
  for (const auto& [id, progress] : progress_) {
    const v1::JobRecord* job = context_.FindJob(id);
    if (job == nullptr) continue;
    std::optional<v1::JobStragglers> view = View(*job, /*with_nodes=*/false);
    if (view && view->stragglers_size() > 0) {
      *status.add_straggler_jobs() = *std::move(view);
    }
  }
}

void StragglerFeature::FillJob(const v1::JobRecord& job,
                               v1::GetJobResponse& reply) const {
  if (std::optional<v1::JobStragglers> view = View(job, /*with_nodes=*/true)) {
    *reply.mutable_progress() = *std::move(view);
  }
}

void StragglerFeature::OnCheckpoint(const v1::JobRecord& job) {
  if (settings_.response != StragglerResponse::kSwap) return;
  auto it = progress_.find(job.id());
  if (it == progress_.end() || it->second.attempt() != job.attempt() ||
      job.state() != v1::RUNNING) {
    return;
  }
  // Found before this checkpoint (at the last check): the work up to it is
  // kept, so swapping costs only the restart.
  std::vector<StragglerFinding> stragglers = it->second.Stragglers();
  // Only as many as the job can restart without right now: a swap that
  // drained a node the job's --nodelist holds, or left it no placement,
  // would leave it pending forever.
  stragglers.resize(Swappable(job, stragglers));
  const uint64_t job_id = job.id();
  std::vector<std::string> swapped;
  for (const StragglerFinding& finding : stragglers) {
    if (!context_.JobOccupies(job_id, finding.node) ||
        !context_.DrainNode(finding.node, Describe(finding, job_id))) {
      continue;
    }
    swapped.push_back(
        absl::StrFormat("%s (%.1fx slower)", finding.node, finding.slowdown));
  }
  if (swapped.empty()) return;
  // `job` may change under the restart: what is needed of it is copied.
  const std::string detail = absl::StrCat("straggler swap at checkpoint ",
                                          job.latest_checkpoint().path(), ": ",
                                          absl::StrJoin(swapped, ", "));
  if (absl::Status status =
          context_.RestartUncharged(job_id, "Straggler", detail);
      !status.ok()) {
    log::Error("straggler swap: cannot requeue the job",
               {{"job", job_id}, {"error", status.ToString()}});
    return;
  }
  context_.RecordEvent(job_id, "", "straggler_swap", detail);
  log::Warn("stragglers swapped out", {{"job", job_id}, {"detail", detail}});
  if (ControllerMetrics* metrics = context_.metrics()) {
    metrics->stragglers().CountSwaps(static_cast<uint32_t>(swapped.size()));
  }
  progress_.erase(it);
}

FeatureFactory StragglerFeatureFactory(StragglerSettings settings) {
  return [settings](FeatureContext& context) {
    return std::make_unique<StragglerFeature>(context, settings);
  };
}

}  // namespace gantry
