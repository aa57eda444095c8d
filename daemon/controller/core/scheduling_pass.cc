// The scheduling pass (scheduling_pass.h): gate, snapshot, order,
// Schedule(), then write back waits and starts.
#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "common/job_dependency.h"
#include "common/log.h"
#include "daemon/controller/core/controller_metrics.h"
#include "daemon/controller/core/preflight_record.h"
#include "daemon/controller/core/scheduling_input.h"
#include "daemon/controller/core/scheduling_pass.h"
#include "daemon/launch/step_layout.h"
#include "daemon/scheduler/scheduler.h"

namespace gantry {
namespace {

// How many tasks of the array with that id are RUNNING; `jobs` is the
// controller's id-ordered job map (its value type is private to it).
template <typename JobMap>
uint32_t RunningArrayTasks(const JobMap& jobs, uint64_t array_job_id) {
  uint32_t running = 0;
  // The tasks have consecutive ids from the array's.
  for (auto it = jobs.lower_bound(array_job_id);
       it != jobs.end() && it->second.record.array_job_id() == array_job_id;
       ++it) {
    if (it->second.record.state() == v1::RUNNING) ++running;
  }
  return running;
}

// Weighs the queued jobs' datasets by the sizes the nodes report.
void WeighDatasets(const std::map<std::string, NodeRuntime>& nodes,
                   std::vector<PendingJob>& queue) {
  if (std::none_of(queue.begin(), queue.end(), [](const PendingJob& job) {
        return !job.datasets.empty();
      })) {
    return;
  }
  DatasetSizes sizes;
  for (const auto& [name, node] : nodes) {
    AddDatasetSizes(node.dataset_cache, sizes);
  }
  for (PendingJob& job : queue) SetDatasetSizes(sizes, job);
}

}  // namespace

std::shared_ptr<const NodeConstraint> ParsedConstraint(JobRuntime& job) {
  job.constraint =
      ParsedConstraintOf(job.record.spec().constraint(), job.constraint);
  return job.constraint;
}

SchedulingPass::SchedulingPass(Parts parts) : parts_(parts) {}

bool SchedulingPass::EligibleAgainBy(int64_t now_ms) {
  if (next_eligible_ms_ == 0 || now_ms < next_eligible_ms_) return false;
  next_eligible_ms_ = 0;
  return true;
}

void SchedulingPass::EligibleAt(int64_t at_ms) {
  if (next_eligible_ms_ == 0 || at_ms < next_eligible_ms_) {
    next_eligible_ms_ = at_ms;
  }
}

// The pass in named steps: gate each pending job (Gate), snapshot the
// nodes, order the queue, Schedule(), then write back waits and starts.
void SchedulingPass::Run() {
  // Reused from pass to pass: with tens of thousands pending, a fresh
  // queue was megabytes of new memory to fault in on every pass.
  std::vector<PendingJob>& queue = pending_queue_;
  queue.clear();
  const int64_t now = parts_.clock.NowMs();
  next_eligible_ms_ = 0;
  singleton_holders_.reset();  // rebuilt on first use in this pass
  std::size_t dependency_waiters = 0;
  ArraySlots array_slots;
  // The queued jobs in id order, for finding them from the result.
  std::vector<std::pair<uint64_t, JobRuntime*>> queued;
  // Grown geometrically (a reserve to the exact size would reallocate on
  // every pass while the queue grows).
  if (queue.capacity() < parts_.state.live_jobs.size()) {
    queue.reserve(2 * parts_.state.live_jobs.size());
  }
  queued.reserve(parts_.state.live_jobs.size());
  for (auto& [id, live] : parts_.state.live_jobs) {
    switch (Gate(*live, now, array_slots)) {
      case GateVerdict::kNotPending:
      case GateVerdict::kWait:
        continue;
      case GateVerdict::kWaitForDependency:
        ++dependency_waiters;
        continue;
      case GateVerdict::kQueue: {
        queue.push_back(PendingJobOf(live->record, ParsedConstraint(*live)));
        // The features may keep nodes from it, or hold it out of this pass
        // (a restart after a node fault: fault_survivor_feature.h).
        PlacementLimits limits;
        limits.excluded = &queue.back().excluded_nodes;
        const bool sized_by_range = queue.back().min_nodes > 0;
        for (const std::unique_ptr<ControllerFeature>& feature :
             parts_.features) {
          feature->LimitPlacement(live->record, sized_by_range, limits);
        }
        if (limits.held) {
          live->record.set_reason(limits.reason);
          live->record.set_reason_detail(limits.detail);
          queue.pop_back();
          continue;
        }
        queued.emplace_back(id, live);
        continue;
      }
    }
  }
  if (queue.empty()) {
    for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
      feature->OnReservations({}, {});
    }
    return;
  }
  // The node snapshot only when there is something to place: every
  // registration asks for a pass, and a fleet of thousands registering
  // would otherwise pay for the whole table each time.
  std::vector<const std::string*> names;
  std::vector<NodeSnapshot> snapshot = NodeSnapshots(names);
  WeighDatasets(parts_.state.nodes, queue);
  auto queued_job = [&queued](JobId job_id) -> JobRuntime& {
    auto it = std::lower_bound(
        queued.begin(), queued.end(), job_id.value(),
        [](const auto& entry, uint64_t key) { return entry.first < key; });
    return *it->second;
  };
  OrderQueue(queue, parts_.lifecycle.fair_share(),
             parts_.options.priority_weights, now);
  for (const PendingJob& pending : queue) {
    queued_job(pending.id).priority = pending.priority;
  }
  ScheduleResult result = Schedule(
      snapshot, queue, RunningJobs(names),
      SchedulerOptions{true, true, now, parts_.options.unlisted_nodes});
  // A job that starts now may release an `after` dependency: look again.
  if (dependency_waiters > 0 && !result.starts.empty()) parts_.passes.Request();
  for (JobWait& wait : result.waits) {
    queued_job(wait.job_id).expected_start_ms = wait.expected_start_ms;
    v1::JobRecord& record = queued_job(wait.job_id).record;
    wait.detail = WithPreflightNote(record, wait.detail);
    // Most jobs wait as they did in the last pass: leave their text be.
    if (record.reason() != wait.reason) {
      record.set_reason(std::move(wait.reason));
    }
    if (record.reason_detail() != wait.detail) {
      record.set_reason_detail(std::move(wait.detail));
    }
  }
  for (const JobStart& start : result.starts) {
    JobRuntime& job = queued_job(start.job_id);
    SetAllocation(start, names, job.record);
    parts_.lifecycle.StartJob(job);
  }
  // Where the reserved jobs will run (their datasets go there now).
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    feature->OnReservations(result.reservations, names);
  }
}

SchedulingPass::GateVerdict SchedulingPass::Gate(JobRuntime& job, int64_t now,
                                                 ArraySlots& array_slots) {
  v1::JobRecord& record = job.record;
  if (record.state() != v1::PENDING) return GateVerdict::kNotPending;
  if (record.held()) return GateVerdict::kWait;  // its reason says so
  // A requeued job waits for its backoff and for the ranks of its last
  // attempt to be gone, so no two attempts ever run at once.
  if (!job.occupied_nodes.empty()) {
    record.set_reason("Restarting");
    record.set_reason_detail(absl::StrCat("waiting for the ranks of attempt ",
                                          record.attempt(), " to stop"));
    return GateVerdict::kWait;
  }
  if (record.eligible_time_ms() > now) {
    if (record.attempt() == 0) {
      // --begin
      record.set_reason("BeginTime");
      record.set_reason_detail(absl::StrCat(
          "eligible in ", (record.eligible_time_ms() - now + 999) / 1000,
          " s (--begin)"));
    } else {
      record.set_reason("Restarting");
      record.set_reason_detail(
          absl::StrCat("backoff: attempt ", record.attempt() + 1, " in ",
                       (record.eligible_time_ms() - now + 999) / 1000, " s"));
    }
    EligibleAt(record.eligible_time_ms());
    return GateVerdict::kWait;
  }
  const v1::JobSpec& spec = record.spec();
  if (!spec.dependency().empty() && !DependencyAllowsStart(job, now)) {
    return GateVerdict::kWaitForDependency;
  }
  if (record.array().max_running() > 0) {
    auto [slots, fresh] = array_slots.try_emplace(record.array_job_id(), 0);
    if (fresh) {
      const uint32_t running =
          RunningArrayTasks(parts_.state.jobs, record.array_job_id());
      const uint32_t limit = record.array().max_running();
      slots->second = running < limit ? limit - running : 0;
    }
    if (slots->second == 0) {
      record.set_reason("JobArrayTaskLimit");
      record.set_reason_detail(
          absl::StrCat("array ", record.array_job_id(), " runs at most ",
                       record.array().max_running(),
                       " task(s) at once (--array=", spec.array(), ")"));
      return GateVerdict::kWait;
    }
    --slots->second;
  }
  return GateVerdict::kQueue;
}

// Whether a pending job's --dependency lets it start now; if not, sets its
// reason (Dependency, or DependencyNeverSatisfied as Slurm says when it
// never will) and, for after+MIN, when to look again.
bool SchedulingPass::DependencyAllowsStart(JobRuntime& job, int64_t now) {
  v1::JobRecord& record = job.record;
  absl::StatusOr<JobDependency> dependency =
      ParseDependency(record.spec().dependency());
  if (!dependency.ok()) {  // checked at submit; only a damaged record
    record.set_reason("DependencyNeverSatisfied");
    record.set_reason_detail(std::string(dependency.status().message()));
    return false;
  }
  auto depended_of = [](const v1::JobRecord& other) {
    DependedJob depended;
    depended.start_time_ms = other.start_time_ms();
    switch (other.state()) {
      case v1::PENDING:
        depended.phase = DependedJob::Phase::kPending;
        break;
      case v1::RUNNING:
        depended.phase = DependedJob::Phase::kRunning;
        break;
      case v1::COMPLETED:
        depended.phase = DependedJob::Phase::kCompleted;
        break;
      default:
        depended.phase = DependedJob::Phase::kFailed;
        break;
    }
    return depended;
  };
  auto lookup = [this,
                 &depended_of](uint64_t id) -> std::optional<DependedJob> {
    auto it = parts_.state.jobs.find(id);
    if (it == parts_.state.jobs.end()) return std::nullopt;
    if (it->second.record.array_job_id() != id) {
      return depended_of(it->second.record);
    }
    // An array's id stands for all its tasks, as in Slurm: started when
    // all have started, ended when all have ended, COMPLETED when all did.
    DependedJob all;
    bool pending = false, running = false, failed = false;
    for (; it != parts_.state.jobs.end() &&
           it->second.record.array_job_id() == id;
         ++it) {
      const DependedJob task = depended_of(it->second.record);
      pending = pending || task.phase == DependedJob::Phase::kPending;
      running = running || task.phase == DependedJob::Phase::kRunning;
      failed = failed || task.phase == DependedJob::Phase::kFailed;
      all.start_time_ms = std::max(all.start_time_ms, task.start_time_ms);
    }
    all.phase = pending   ? DependedJob::Phase::kPending
                : running ? DependedJob::Phase::kRunning
                : failed  ? DependedJob::Phase::kFailed
                          : DependedJob::Phase::kCompleted;
    return all;
  };
  bool singleton_blocked = false;
  if (std::any_of(dependency->terms.begin(), dependency->terms.end(),
                  [](const DependencyTerm& term) {
                    return term.kind == DependencyTerm::Kind::kSingleton;
                  })) {
    if (!singleton_holders_) {
      // The oldest active job of each user and name holds the singleton.
      singleton_holders_.emplace();
      for (const auto& [id, other] : parts_.state.jobs) {
        if (other.record.state() == v1::PENDING ||
            other.record.state() == v1::RUNNING) {
          singleton_holders_->emplace(
              std::make_pair(other.record.user(), other.record.spec().name()),
              id);
        }
      }
    }
    auto holder = singleton_holders_->find(
        std::make_pair(record.user(), record.spec().name()));
    singleton_blocked =
        holder != singleton_holders_->end() && holder->second != record.id();
  }
  DependencyVerdict verdict =
      EvaluateDependency(*dependency, lookup, singleton_blocked, now);
  switch (verdict.state) {
    case DependencyVerdict::State::kSatisfied:
      return true;
    case DependencyVerdict::State::kNever:
      record.set_reason("DependencyNeverSatisfied");
      record.set_reason_detail(verdict.detail +
                               "; cancel the job (gantry cancel)");
      return false;
    case DependencyVerdict::State::kWaiting:
      record.set_reason("Dependency");
      record.set_reason_detail(verdict.detail);
      if (verdict.ready_at_ms > 0) EligibleAt(verdict.ready_at_ms);
      return false;
  }
  return false;
}

std::vector<NodeSnapshot> SchedulingPass::NodeSnapshots(
    std::vector<const std::string*>& names) const {
  std::vector<NodeSnapshot> snapshot;
  snapshot.reserve(parts_.state.nodes.size());
  names.reserve(parts_.state.nodes.size());
  for (const auto& [name, node] : parts_.state.nodes) {
    snapshot.push_back(NodeSnapshotOf(node.record, node.link != nullptr,
                                      node.usage, parts_.switch_tree.topology(),
                                      node.dataset_cache));
    names.push_back(&name);
  }
  return snapshot;
}

// What the running jobs hold and until when, for backfill reservations.
std::vector<RunningJob> SchedulingPass::RunningJobs(
    const std::vector<const std::string*>& node_names) const {
  std::map<std::string_view, std::size_t> index_of;
  for (std::size_t i = 0; i < node_names.size(); ++i) {
    index_of[*node_names[i]] = i;
  }
  std::vector<RunningJob> running;
  for (const auto& [id, live] : parts_.state.live_jobs) {
    const JobRuntime& job = *live;
    const v1::JobRecord& record = job.record;
    // A job that ended (or is being requeued) still holds its nodes until
    // its ranks are gone, at the latest a kill grace from now.
    const bool stopping =
        record.state() != v1::RUNNING && !job.occupied_nodes.empty();
    if (record.state() != v1::RUNNING && !stopping) continue;
    RunningJob r;
    r.id = JobId(id);
    r.exclusive = record.spec().exclusive();
    const int64_t limit_ms =
        static_cast<int64_t>(record.spec().time_limit_seconds()) * 1000;
    if (stopping) {
      r.expected_end_ms = parts_.clock.NowMs() +
                          int64_t{parts_.options.kill_grace_seconds} * 1000;
    } else {
      r.expected_end_ms = limit_ms > 0 ? record.start_time_ms() + limit_ms
                                       : std::numeric_limits<int64_t>::max();
    }
    for (const v1::NodeAllocation& allocation : record.allocation()) {
      if (stopping && !job.occupied_nodes.count(allocation.node())) continue;
      auto it = index_of.find(allocation.node());
      if (it == index_of.end()) continue;
      NodeShare share;
      share.node = NodeId(it->second);
      share.cpus = allocation.cpus();
      share.gpus = {allocation.gpu_indices().begin(),
                    allocation.gpu_indices().end()};
      share.mem_mb = allocation.mem_mb();
      r.shares.push_back(std::move(share));
    }
    running.push_back(std::move(r));
  }
  return running;
}

}  // namespace gantry
