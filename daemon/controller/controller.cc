// Controller: construction, loading, persistence (group commit) and the
// read-only client views. Job lifecycle is in controller_jobs.cc, the agent
// protocol and timers in controller_agents.cc, `gantry status` in
// controller_status.cc.
#include "daemon/controller/controller.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>

#include <boost/asio/post.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/hostlist.h"
#include "common/log.h"
#include "daemon/controller/controller_metrics.h"
#include "daemon/controller/job_filter.h"
#include "daemon/launch/step_layout.h"

namespace gantry {

v1::JobState ToProto(JobStatus status) {
  switch (status) {
    case JobStatus::kPending:
      return v1::PENDING;
    case JobStatus::kRunning:
      return v1::RUNNING;
    case JobStatus::kCompleted:
      return v1::COMPLETED;
    case JobStatus::kFailed:
      return v1::FAILED;
    case JobStatus::kCancelled:
      return v1::CANCELLED;
    case JobStatus::kTimeout:
      return v1::TIMEOUT;
    case JobStatus::kNodeFail:
      return v1::NODE_FAIL;
    case JobStatus::kOutOfMemory:
      return v1::OUT_OF_MEMORY;
  }
  return v1::JOB_STATE_UNSPECIFIED;
}

JobStatus FromProto(v1::JobState state) {
  switch (state) {
    case v1::RUNNING:
      return JobStatus::kRunning;
    case v1::COMPLETED:
      return JobStatus::kCompleted;
    case v1::FAILED:
      return JobStatus::kFailed;
    case v1::CANCELLED:
      return JobStatus::kCancelled;
    case v1::TIMEOUT:
      return JobStatus::kTimeout;
    case v1::NODE_FAIL:
      return JobStatus::kNodeFail;
    case v1::OUT_OF_MEMORY:
      return JobStatus::kOutOfMemory;
    default:
      return JobStatus::kPending;
  }
}

namespace {

// No partitions given: one "main" of every node. The partitions' hot
// spares join the global set (being a spare is a property of the node).
ControllerOptions WithPartitionDefaults(ControllerOptions options) {
  if (options.partitions.empty()) {
    PartitionConfig main;
    main.name = "main";
    main.is_default = true;
    options.partitions.push_back(std::move(main));
  }
  for (const PartitionConfig& partition : options.partitions) {
    options.hot_spares.insert(partition.hot_spares.begin(),
                              partition.hot_spares.end());
  }
  return options;
}

}  // namespace

Controller::Controller(boost::asio::io_context& io, StateStore& store,
                       const Clock& clock, ControllerOptions options)
    : io_(io),
      store_(store),
      clock_(clock),
      options_(WithPartitionDefaults(std::move(options))),
      timer_(io),
      retired_usage_(options_.priority_weights.half_life_ms),
      writer_(io, store),
      fair_share_(options_.priority_weights.half_life_ms) {}

absl::Status Controller::Start() {
  absl::StatusOr<StateStore::Snapshot> snapshot = store_.Load();
  if (!snapshot.ok()) return snapshot.status();
  started_ms_ = clock_.NowMs();
  next_job_id_ = snapshot->next_job_id;
  next_event_sequence_ = snapshot->next_event_sequence;
  cluster_id_ = snapshot->cluster_id;
  if (cluster_id_ == 0) {
    std::random_device random;
    cluster_id_ = (uint64_t{random()} << 32) | random() | 1;
    batch_.cluster_id = cluster_id_;
    AfterCommit(nullptr);
  }
  for (v1::NodeRecord& record : snapshot->nodes) {
    NodeRuntime node;
    node.record = std::move(record);
    // Nobody is connected yet: give every known node the grace period to
    // come back before its work is declared lost.
    if (node.record.state() != v1::NODE_DOWN) {
      node.record.set_state(v1::NODE_UNREACHABLE);
    }
    node.deadline_ms = started_ms_ + options_.reconnect_grace_ms;
    // The partitions may have changed since the node was stored.
    AssignPartitions(node.record);
    nodes_.emplace(node.record.name(), std::move(node));
  }
  size_t running = 0, pending = 0;
  for (v1::JobRecord& record : snapshot->jobs) {
    const uint64_t id = record.id();
    JobRuntime& job = jobs_.emplace_hint(jobs_.end(), id, JobRuntime())->second;
    job.record = std::move(record);
    JobStatus status = FromProto(job.record.state());
    if (status == JobStatus::kRunning) {
      ++running;
      for (const v1::RankExit& exit : job.record.exits()) {
        job.exited_ranks.insert(exit.rank());
      }
      HoldResources(job);
      for (int i = 0; i < job.record.allocation_size(); ++i) {
        const v1::NodeAllocation& share = job.record.allocation(i);
        uint32_t live = 0;
        for (uint32_t r = 0; r < ScriptRanksOn(job.record, i); ++r) {
          if (!job.exited_ranks.count(share.first_rank() + r)) ++live;
        }
        job.live_ranks[share.node()] = live;
      }
      // Step tasks not known to have exited.
      for (const v1::StepRecord& step : job.record.steps()) {
        for (const v1::NodeAllocation& share : step.nodes()) {
          uint32_t exited = 0;
          for (const v1::RankExit& exit : step.exits()) {
            if (exit.node() == share.node()) ++exited;
          }
          if (share.rank_count() > exited) {
            job.live_ranks[share.node()] += share.rank_count() - exited;
          }
        }
      }
    } else if (status == JobStatus::kPending) {
      ++pending;
    } else {
      ++finished_jobs_;
    }
    if (options_.metrics) options_.metrics->JobAdded(status);
    UpdateLive(job);
  }
  // Fair share: the jobs that left the live state, as stored, then the
  // finished jobs still in it, oldest end first so the decay is applied in
  // time order.
  if (snapshot->retired_usage) {
    std::map<std::string, FairShare::Decayed> users;
    for (const auto& [user, usage] : snapshot->retired_usage->users()) {
      users[user] = {usage.value(), usage.at_ms()};
    }
    const auto& total = snapshot->retired_usage->total();
    retired_usage_.Restore(users, {total.value(), total.at_ms()});
    fair_share_.Restore(std::move(users), {total.value(), total.at_ms()});
  }
  std::vector<const v1::JobRecord*> finished;
  for (const auto& [id, job] : jobs_) {
    if (IsTerminal(FromProto(job.record.state()))) {
      finished.push_back(&job.record);
    }
  }
  std::sort(finished.begin(), finished.end(), [](const auto* a, const auto* b) {
    return a->end_time_ms() < b->end_time_ms();
  });
  for (const v1::JobRecord* record : finished) {
    if (record->end_time_ms() > 0) ChargeUsage(*record);
    finished_order_.emplace_back(record->end_time_ms(), record->id());
  }
  log::Info("state loaded",
            {{"state_dir", options_.state_dir},
             {"jobs", jobs_.size()},
             {"pending", pending},
             {"running", running},
             {"nodes", nodes_.size()},
             {"next_job_id", next_job_id_},
             {"reconnect_grace_ms", options_.reconnect_grace_ms}});
  if (snapshot->topology) {
    topology_record_ = snapshot->topology;
    RefreshTopology();
  }
  ArmTimer();
  ArmStatusTimer();
  RequestSchedule();
  return absl::OkStatus();
}

void Controller::Stop() {
  stopped_ = true;
  timer_.cancel();
  status_timer_.cancel();
  schedule_timer_.cancel();
  // gantry run waits on its step: tell it to ask the next controller, so
  // the server's shutdown has no call left open.
  for (auto& [id, job] : jobs_) {
    for (auto& [step, waiters] : job.step_waiters) {
      for (const auto& done : waiters) {
        done(absl::UnavailableError("the controller is stopping"));
      }
    }
    job.step_waiters.clear();
  }
}

void Controller::UpdateLive(JobRuntime& job) {
  const v1::JobState state = job.record.state();
  if (state == v1::PENDING || state == v1::RUNNING || !job.held_nodes.empty()) {
    live_jobs_.insert_or_assign(live_jobs_.end(), job.record.id(), &job);
  } else {
    live_jobs_.erase(job.record.id());
  }
}

void Controller::StageJob(const JobRuntime& job) {
  batch_.jobs.push_back(job.record);
  AfterCommit(nullptr);
}

void Controller::StageNode(const NodeRuntime& node) {
  batch_.nodes.push_back(node.record);
  AfterCommit(nullptr);
}

void Controller::StageEvent(uint64_t job_id, const std::string& node,
                            const std::string& kind,
                            const std::string& detail) {
  v1::EventRecord event;
  event.set_sequence(next_event_sequence_++);
  event.set_time_ms(clock_.NowMs());
  event.set_job_id(job_id);
  event.set_node(node);
  event.set_kind(kind);
  event.set_detail(detail);
  node_events_.Observe(event);
  batch_.events.push_back(std::move(event));
  batch_.next_event_sequence = next_event_sequence_;
  AfterCommit(nullptr);
}

void Controller::AfterCommit(std::function<void()> action) {
  if (action) after_commit_.push_back(std::move(action));
  if (flush_posted_) return;
  flush_posted_ = true;
  // Posted behind whatever is already queued, so every request that arrived
  // in this turn lands in the same batch.
  boost::asio::post(io_, [this] { Flush(); });
}

void Controller::Flush() {
  flush_posted_ = false;
  // One batch at a time: what is staged meanwhile waits for the one in
  // flight and then goes out whole (CommitDone starts it).
  if (writer_.busy()) return;
  StateStore::Batch batch = std::move(batch_);
  batch_ = StateStore::Batch();
  std::vector<std::function<void()>> actions = std::move(after_commit_);
  after_commit_.clear();
  if (batch.empty()) {
    for (auto& action : actions) action();
    return;
  }
  writer_.Commit(std::move(batch),
                 [this, actions = std::move(actions)](absl::Status status,
                                                      double seconds) mutable {
                   CommitDone(status, seconds, actions);
                 });
}

void Controller::CommitDone(const absl::Status& status, double seconds,
                            std::vector<std::function<void()>>& actions) {
  commit_latencies_.Add(seconds);
  if (options_.metrics) options_.metrics->ObserveStoreCommit(seconds);
  if (!status.ok()) {
    // Memory now holds changes the disk does not: the only safe state is
    // the one on disk, so stop and let systemd restart us from it.
    log::Error("cannot persist state; exiting to recover from disk",
               {{"error", status.ToString()}});
    std::abort();
  }
  for (auto& action : actions) action();
  // What was staged during the write goes out now.
  if (!batch_.empty() || !after_commit_.empty()) Flush();
}

absl::StatusOr<v1::ListJobsResponse> Controller::ListJobs(
    const v1::ListJobsRequest& request) {
  // A page of summaries stays far below any client's receive limit
  // whatever the jobs hold (a 100,000-node allocation is megabytes).
  constexpr uint32_t kMaxPageJobs = 5000;
  constexpr size_t kMaxPageBytes = 4 << 20;
  if (absl::Status valid = CheckFilter(request.filter()); !valid.ok()) {
    return valid;
  }
  uint64_t after = 0;
  if (!request.page_token().empty() &&
      !absl::SimpleAtoi(request.page_token(), &after)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid page_token \"", request.page_token().substr(0, 40),
        "\" (give the next_page_token of the previous page)"));
  }
  const uint32_t page_size = request.page_size() == 0
                                 ? kMaxPageJobs
                                 : std::min(request.page_size(), kMaxPageJobs);
  v1::JobFilter filter = request.filter();
  if (!request.user().empty() && filter.users().empty()) {
    filter.add_users(request.user());
  }
  v1::ListJobsResponse response;
  size_t page_bytes = 0;
  // False once the page is full.
  auto list = [&](JobRuntime& job) {
    if (!request.all() && IsTerminal(FromProto(job.record.state()))) {
      return true;
    }
    if (!MatchesFilter(filter, job.record)) return true;
    if (response.jobs_size() >= static_cast<int>(page_size) ||
        page_bytes >= kMaxPageBytes) {
      response.set_next_page_token(
          absl::StrCat(response.jobs(response.jobs_size() - 1).id()));
      return false;
    }
    // Summaries carry no payloads: set them aside for the copy instead of
    // copying them and throwing them away.
    v1::JobSpec& spec = *job.record.mutable_spec();
    std::string script;
    script.swap(*spec.mutable_script());
    google::protobuf::RepeatedPtrField<std::string> args;
    args.Swap(spec.mutable_script_args());
    google::protobuf::Map<std::string, std::string> environment;
    environment.swap(*spec.mutable_environment());
    v1::JobRecord* copy = response.add_jobs();
    *copy = job.record;
    spec.mutable_script()->swap(script);
    spec.mutable_script_args()->Swap(&args);
    spec.mutable_environment()->swap(environment);
    ClearPayloads(*copy);  // step command lines
    copy->set_priority(job.priority);
    page_bytes += copy->ByteSizeLong();
    return true;
  };
  // Without --all only live jobs can qualify: skip the finished ones.
  if (request.all()) {
    for (auto it = jobs_.upper_bound(after); it != jobs_.end(); ++it) {
      if (!list(it->second)) break;
    }
  } else {
    for (auto it = live_jobs_.upper_bound(after); it != live_jobs_.end();
         ++it) {
      if (!list(*it->second)) break;
    }
  }
  return response;
}

absl::StatusOr<v1::GetJobResponse> Controller::GetJob(
    uint64_t job_id, const Caller& caller) const {
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  return GetJob(request, caller);
}

absl::StatusOr<v1::GetJobResponse> Controller::GetJob(
    const v1::GetJobRequest& request, const Caller& caller) const {
  uint64_t job_id = request.job_id();
  const std::optional<uint32_t> task =
      request.has_array_task_id()
          ? std::optional<uint32_t>(request.array_task_id())
          : std::nullopt;
  const std::string name =
      task ? absl::StrCat(job_id, "_", *task) : absl::StrCat(job_id);
  v1::GetJobResponse response;
  bool found = false;
  // Array tasks have consecutive ids from the array's.
  for (auto it = jobs_.lower_bound(job_id); it != jobs_.end(); ++it) {
    const v1::JobRecord& record = it->second.record;
    if (task ? record.array_job_id() != job_id : it->first != job_id) break;
    if (task && record.array_task_id() != *task) continue;
    *response.mutable_job() = record;
    response.mutable_job()->set_priority(it->second.priority);
    found = true;
    break;
  }
  if (!found) {
    absl::StatusOr<std::optional<v1::JobRecord>> retired =
        RetiredJob(job_id, task);
    if (!retired.ok()) return retired.status();
    if (!retired->has_value()) {
      return absl::NotFoundError(absl::StrCat(
          "invalid job id ", name, task ? " (no such array task)" : ""));
    }
    *response.mutable_job() = std::move(**retired);
  }
  job_id = response.job().id();
  response.mutable_job()->mutable_spec()->clear_environment();
  // Others see a job as squeue shows it, not what it runs.
  if (!caller.MayManage(response.job().uid())) {
    ClearPayloads(*response.mutable_job());
  }
  absl::StatusOr<std::vector<v1::EventRecord>> events =
      store_.JobEvents(job_id);
  uint64_t stored_up_to = 0;
  if (events.ok()) {
    for (v1::EventRecord& event : *events) {
      stored_up_to = std::max(stored_up_to, event.sequence());
      *response.add_events() = std::move(event);
    }
  }
  // The record above already shows what the batch being written and the
  // one being staged change: so does its history (events are numbered in
  // order, and the write may land while the store is read).
  for (const StateStore::Batch* pending : {writer_.in_flight(), &batch_}) {
    if (pending == nullptr) continue;
    for (const v1::EventRecord& event : pending->events) {
      if (event.job_id() == job_id && event.sequence() > stored_up_to) {
        *response.add_events() = event;
      }
    }
  }
  return response;
}

v1::ListNodesResponse Controller::ListNodes() const {
  v1::ListNodesResponse response;
  for (const auto& [name, node] : nodes_) {
    v1::NodeRecord* record = response.add_nodes();
    *record = node.record;
    record->set_cpus_allocated(node.cpus_used);
    record->set_gpus_allocated(static_cast<uint32_t>(node.gpus_used.size()));
    record->set_mem_allocated_mb(node.mem_used_mb);
    for (const std::string& leaf : LeafSwitchesOf(name)) {
      record->add_leaf_switches(leaf);
    }
  }
  for (const PartitionConfig& partition : options_.partitions) {
    v1::PartitionInfo* info = response.add_partitions();
    info->set_name(partition.name);
    info->set_is_default(partition.is_default);
    info->set_default_time_seconds(partition.default_time_seconds);
    info->set_max_time_seconds(partition.max_time_seconds);
    info->set_max_nodes(partition.max_nodes);
    info->set_nodes(partition.all_nodes
                        ? "ALL"
                        : CompressHostlist({partition.nodes.begin(),
                                            partition.nodes.end()}));
  }
  return response;
}

}  // namespace gantry

namespace gantry {

void Controller::RecordCheckpoint(JobRuntime& job, const std::string& path,
                                  int64_t step, const std::string& source) {
  v1::JobRecord& record = job.record;
  const int64_t now = clock_.NowMs();
  record.set_last_progress_ms(now);
  if (step >= 0) record.set_progress_step(step);
  if (path.empty()) return;  // progress only: memory is enough
  const v1::CheckpointInfo& latest = record.latest_checkpoint();
  // Markers are re-read every few seconds: only a new checkpoint counts, and
  // never one older than what is known.
  if (latest.path() == path && latest.step() == step) return;
  if (step >= 0 && latest.step() > step) return;
  v1::CheckpointInfo& info = *record.mutable_latest_checkpoint();
  info.set_path(path);
  info.set_step(step);
  info.set_time_ms(now);
  info.set_source(source);
  StageJob(job);
  StageEvent(
      record.id(), "", "checkpoint",
      absl::StrCat(path, step >= 0 ? absl::StrCat(" (step ", step, ")") : "",
                   " from ", source));
  log::Info("checkpoint recorded", {{"job", record.id()},
                                    {"path", path},
                                    {"step", step},
                                    {"source", source}});
}

absl::StatusOr<Controller::JobRuntime*> Controller::ManagedJob(
    uint64_t job_id, const Caller& caller) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat("invalid job id ", job_id));
  }
  if (!caller.MayManage(it->second.record.uid())) {
    return absl::PermissionDeniedError(absl::StrCat("access denied: job ",
                                                    job_id, " belongs to ",
                                                    it->second.record.user()));
  }
  return &it->second;
}

void Controller::ReportProgress(const v1::ReportProgressRequest& request,
                                const Caller& caller,
                                std::function<void(absl::Status)> done) {
  absl::StatusOr<JobRuntime*> found = ManagedJob(request.job_id(), caller);
  if (!found.ok()) {
    done(found.status());
    return;
  }
  JobRuntime& job = **found;
  if (job.record.state() != v1::RUNNING) {
    done(absl::FailedPreconditionError(
        absl::StrCat("job ", request.job_id(), " is not running")));
    return;
  }
  if (request.checkpoint_path().size() > 4096) {
    done(absl::InvalidArgumentError("the checkpoint path is too long"));
    return;
  }
  RecordCheckpoint(job, request.checkpoint_path(), request.step(), "report");
  AfterCommit([done = std::move(done)] { done(absl::OkStatus()); });
}

void Controller::DrainNode(NodeRuntime& node, const std::string& reason) {
  node.record.set_drained(true);
  node.record.set_drain_reason(reason);
  StageNode(node);
  StageEvent(0, node.record.name(), "node_drained", reason);
  log::Warn("node drained", {{"node", node.record.name()}, {"reason", reason}});
}

void Controller::Drain(const v1::DrainRequest& request, const Caller& caller,
                       std::function<void(absl::Status)> done) {
  if (!caller.admin) {
    done(absl::PermissionDeniedError(absl::StrCat(
        "draining and resuming nodes needs an admin (root or the admin "
        "group); you are ",
        caller.user)));
    return;
  }
  if (!request.resume() && request.reason().empty()) {
    done(absl::InvalidArgumentError("a drain needs a reason (--reason)"));
    return;
  }
  for (const std::string& name : request.nodes()) {
    if (!nodes_.count(name)) {
      done(absl::NotFoundError(absl::StrCat("unknown node ", name)));
      return;
    }
  }
  for (const std::string& name : request.nodes()) {
    NodeRuntime& node = nodes_.at(name);
    if (request.resume()) {
      node.record.set_drained(false);
      node.record.clear_drain_reason();
      StageNode(node);
      StageEvent(0, name, "node_resumed", "by " + caller.user);
      log::Info("node resumed", {{"node", name}});
    } else {
      DrainNode(node, request.reason());
    }
  }
  RequestSchedule();
  AfterCommit([done = std::move(done)] { done(absl::OkStatus()); });
}

}  // namespace gantry
