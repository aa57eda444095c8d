// Controller: the periodic tick (Tick) and what it checks each time:
// nodes not heard from in time (held off when most fall silent at once),
// the running and --deadline jobs' clocks (time limit, deadline, hang
// timeout, warning signals, step waits), and the node gauges. Apart from
// controller_agents.cc, which answers what agents say; this file acts on
// what they did not say in time.
#include <algorithm>
#include <chrono>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/controller_metrics.h"
#include "daemon/scheduler/job_deadline.h"

namespace gantry {
namespace {

constexpr uint64_t kTicksPerNodeCensus = 4;

}  // namespace

void Controller::Tick(uint64_t tick, int64_t late_ms) {
  if (options_.metrics) {
    options_.metrics->ObserveLoopLag(static_cast<double>(late_ms) / 1000.0);
  }
  CheckDeadlines();
  retention_.OnTick(clock_.NowMs());
  // Once a second is fresh enough for any scrape, and each census walks
  // every node.
  if (tick % kTicksPerNodeCensus == 0) PublishNodeMetrics();
  for (const std::unique_ptr<ControllerFeature>& feature : features_) {
    feature->OnTick(tick);
  }
}

void Controller::CheckDeadlines() {
  // Wall-clock time for what is a date (--deadline, --begin); every timer
  // counts on the monotonic clock, which a step of the wall clock does not
  // move.
  const int64_t now = clock_.NowMs();
  const int64_t monotonic = MonotonicMs(clock_);
  // If this loop itself was stalled (swapped out, SIGSTOPped, a slow disk),
  // agents were not heard because we were not listening: give every node
  // the stalled time back before judging it.
  const int64_t expected_gap = kTickInterval.count();
  if (monotonic - last_check_ms_ > 2 * expected_gap) {
    const int64_t stalled = monotonic - last_check_ms_ - expected_gap;
    log::Warn("controller loop was stalled; extending node deadlines",
              {{"stalled_ms", stalled}});
    for (auto& [name, node] : state_.nodes) node.deadline_ms += stalled;
    allocation_liveness_.Postpone(stalled);
  }
  last_check_ms_ = monotonic;
  std::vector<NodeRuntime*> late;
  size_t up = 0;
  // Silent for over half the node timeout: a healthy agent is heard more
  // often than that, so these fell silent together with the late ones even
  // if their deadlines have not passed yet.
  size_t quiet = 0;
  std::vector<const std::string*> quiet_nodes;
  int64_t first_late_ms = std::numeric_limits<int64_t>::max();
  for (auto& [name, node] : state_.nodes) {
    if (node.record.state() == v1::NODE_DOWN) continue;
    ++up;
    if (monotonic > node.deadline_ms - options_.node_timeout_ms / 2) {
      ++quiet;
      quiet_nodes.push_back(&name);
    }
    if (monotonic > node.deadline_ms) {
      late.push_back(&node);
      first_late_ms = std::min(first_late_ms, node.deadline_ms);
    }
  }
  // Most agents silent at once: this controller is likelier cut off (its
  // link, a firewall change) than most nodes failed in the same moment, and
  // marking them down would drain every busy node. They get the grace
  // agents get after a controller restart (--reconnect-grace), from the
  // first of them falling silent; a real loss of most of the cluster is
  // found that much later.
  const bool most_silent = !late.empty() && quiet >= 2 && 2 * quiet > up;
  if (most_silent && monotonic < first_late_ms + options_.reconnect_grace_ms) {
    // The nodes silent now keep that grace even once most of the others
    // are back: after a cut heals, agents reconnect one by one, and the
    // last must not be marked down because the first are back.
    if (monotonic >= mass_silence_until_ms_) mass_silence_nodes_.clear();
    mass_silence_until_ms_ = std::max(
        mass_silence_until_ms_, first_late_ms + options_.reconnect_grace_ms);
    for (const std::string* name : quiet_nodes) {
      mass_silence_nodes_.insert(*name);
    }
    if (monotonic - first_late_ms <= 2 * expected_gap) {
      log::Warn(
          "most agents fell silent at once: holding off marking them down "
          "for the reconnect grace (this controller may be cut off)",
          {{"silent", quiet},
           {"up", up},
           {"grace_ms", options_.reconnect_grace_ms}});
    }
    late.clear();
  }
  if (monotonic < mass_silence_until_ms_) {
    std::erase_if(late, [&](const NodeRuntime* node) {
      return mass_silence_nodes_.contains(node->record.name());
    });
  } else if (!mass_silence_nodes_.empty()) {
    mass_silence_nodes_.clear();
  }
  for (NodeRuntime* node : late) {
    MarkNodeDown(*node, node->link
                            ? "heartbeats stopped"
                            : "agent connection lost and not back in time");
  }
  // Running jobs have time limits, and pending ones with --deadline may
  // miss it; ending one changes state_.timed_jobs, so walk a copy.
  std::vector<JobRuntime*> running;
  running.reserve(state_.timed_jobs.size());
  for (const auto& [id, timed] : state_.timed_jobs) running.push_back(timed);
  for (JobRuntime* runtime : running) {
    JobRuntime& job = *runtime;
    const v1::JobRecord& record = job.record;
    const bool is_running = record.state() == v1::RUNNING;
    if (MissesDeadline(now, record.spec().deadline_ms(),
                       record.spec().time_limit_seconds() * 1000, is_running)) {
      (void)lifecycle_.ApplyEvent(
          job, {JobEvent::Kind::kDeadline},
          is_running ? "the job's deadline (--deadline) was reached"
                     : "the job could not end before its deadline "
                       "(--deadline)");
      continue;
    }
    if (!is_running) continue;
    if (record.steps_size() > 0) CheckStepWaits(job, monotonic);
    const int64_t running_ms =
        job.running_for.SinceMs(record.start_time_ms(), clock_);
    if (record.spec().warning_signal() != 0) {
      lifecycle_.SendWarningSignal(job, running_ms);
    }
    uint64_t limit_ms = record.spec().time_limit_seconds() * 1000;
    if (limit_ms > 0 && running_ms >= static_cast<int64_t>(limit_ms)) {
      (void)lifecycle_.ApplyEvent(
          job, {JobEvent::Kind::kTimeLimit},
          absl::StrCat("time limit of ", record.spec().time_limit_seconds(),
                       " s reached"));
      continue;
    }
    if (AnyFeature([&](ControllerFeature& feature) {
          return feature.HoldsRanks(record);
        })) {
      continue;
    }
    int64_t hang_ms =
        static_cast<int64_t>(record.spec().hang_timeout_seconds()) * 1000;
    if (hang_ms > 0 &&
        job.quiet_for.SinceMs(record.last_progress_ms(), clock_) > hang_ms) {
      lifecycle_.FailJob(
          job, FailureKind::kHang, 0, 0, false,
          absl::StrCat("no progress for ", record.spec().hang_timeout_seconds(),
                       " s (hang timeout)"),
          record.last_progress_ms());
    }
  }
  EndSilentAllocations(monotonic);
  if (scheduling_.EligibleAgainBy(now)) passes_.Request();
}

void Controller::PublishNodeMetrics() {
  if (!options_.metrics) return;
  NodeCensus census;
  for (const auto& [name, node] : state_.nodes) {
    census.Add(ClassifyNode(node.record.state(), node.record.drained(),
                            node.record.health_problems().empty()),
               static_cast<uint32_t>(node.record.inventory().gpus_size()),
               static_cast<uint32_t>(node.usage.gpus.size()));
  }
  options_.metrics->PublishNodes(census);
}

}  // namespace gantry
