// Controller: submission, cancellation, scheduling passes and the job state
// transitions with their effects.
#include <algorithm>
#include <chrono>
#include <limits>
#include <set>

#include <boost/asio/post.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/crash_point.h"
#include "common/filename_pattern.h"
#include "common/job_array.h"
#include "common/job_dependency.h"
#include "common/log.h"
#include "common/option_values.h"
#include "common/request_limits.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/controller_metrics.h"
#include "daemon/controller/job_filter.h"
#include "daemon/controller/request_validation.h"
#include "daemon/controller/submission_size.h"
#include "daemon/launch/node_restrictions.h"
#include "daemon/launch/rank_environment.h"
#include "daemon/launch/step_layout.h"
#include "daemon/scheduler/scheduler.h"

namespace gantry {
namespace {

// Limits on what one submission may carry: large enough for any real job,
// small enough that a malformed or hostile request cannot exhaust the
// controller.
constexpr uint32_t kMaxNodes = 100'000;
constexpr uint32_t kMaxTasksPerNode = 4096;
constexpr uint32_t kMaxCpusPerTask = 4096;
constexpr uint32_t kMaxGpusPerNode = 64;
constexpr size_t kMaxScriptBytes = limits::kMaxBatchScriptBytes;
constexpr size_t kMaxEnvironmentBytes = 1 << 20;
constexpr size_t kMaxArgs = 4096;
constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxPathBytes = 4096;

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(message);
}

uint32_t TotalRanks(const v1::JobSpec& spec) {
  return spec.ntasks() ? spec.ntasks() : spec.nodes() * spec.ntasks_per_node();
}

// Ranks on the i-th node: block distribution, earlier nodes take the extra.
uint32_t RanksOnNode(const v1::JobSpec& spec, uint32_t node_index) {
  uint32_t total = TotalRanks(spec);
  uint32_t base = total / spec.nodes();
  return base + (node_index < total % spec.nodes() ? 1 : 0);
}

// The switches above a node, leaf first; the first parent wherever a switch
// has several (the scheduler sees a tree). Empty for a node not in the tree.
std::vector<std::string> SwitchPath(const Topology& topology,
                                    const std::string& node) {
  std::vector<std::string> path;
  std::optional<std::string> name = topology.LeafSwitchOf(node);
  while (name.has_value() && path.size() < 64) {
    path.push_back(*name);
    const Topology::Switch* sw = topology.FindSwitch(*name);
    if (sw == nullptr || sw->parents.empty()) break;
    name = sw->parents.front().name;
  }
  return path;
}

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

std::string ResolvePath(const std::string& pattern, const v1::JobRecord& job) {
  std::optional<ArrayTaskIds> array_task;
  if (job.array_job_id() != 0) {
    array_task = ArrayTaskIds{job.array_job_id(), job.array_task_id()};
  }
  std::string path = ExpandFilenamePattern(pattern, job.id(), job.spec().name(),
                                           job.user(), array_task);
  if (path.empty() || path[0] == '/') return path;
  return job.spec().working_dir() + "/" + path;
}

// A held job's pending reason (JobHeldUser) and what releases it.
void MarkHeld(v1::JobRecord& record) {
  record.set_reason("JobHeldUser");
  record.set_reason_detail(
      absl::StrCat("held: starts only after gantry release ", record.id(),
                   " (scontrol release)"));
}

}  // namespace

absl::StatusOr<v1::JobRecord> Controller::ValidateSubmission(
    v1::JobSpec submitted) const {
  if (absl::Status fields = ValidateJobSpecFields(submitted); !fields.ok()) {
    return fields;
  }
  v1::JobRecord job;
  v1::JobSpec& spec = *job.mutable_spec();
  spec.Swap(&submitted);
  if (spec.nodes() == 0) spec.set_nodes(1);
  if (spec.nodes() > kMaxNodes) {
    return Invalid(absl::StrCat("--nodes=", spec.nodes(),
                                " is above the limit of ", kMaxNodes));
  }
  if (spec.ntasks() > 0 && spec.ntasks() < spec.nodes()) {
    return Invalid(absl::StrCat("--ntasks=", spec.ntasks(),
                                " is fewer than --nodes=", spec.nodes()));
  }
  if (spec.ntasks_per_node() == 0) {
    spec.set_ntasks_per_node(
        spec.ntasks() ? (spec.ntasks() + spec.nodes() - 1) / spec.nodes() : 1);
  }
  if (spec.ntasks() > 0 &&
      uint64_t{spec.ntasks_per_node()} * spec.nodes() < spec.ntasks()) {
    return Invalid(absl::StrCat(
        "--ntasks=", spec.ntasks(), " does not fit in ", spec.nodes(),
        " node(s) at --ntasks-per-node=", spec.ntasks_per_node()));
  }
  if (spec.ntasks_per_node() > kMaxTasksPerNode) {
    return Invalid(absl::StrCat("--ntasks-per-node=", spec.ntasks_per_node(),
                                " is above the limit of ", kMaxTasksPerNode));
  }
  if (spec.cpus_per_task() == 0) spec.set_cpus_per_task(1);
  if (spec.cpus_per_task() > kMaxCpusPerTask) {
    return Invalid(absl::StrCat("--cpus-per-task=", spec.cpus_per_task(),
                                " is above the limit of ", kMaxCpusPerTask));
  }
  if (spec.gpus_per_node() > kMaxGpusPerNode) {
    return Invalid(absl::StrCat("--gpus-per-node=", spec.gpus_per_node(),
                                " is above the limit of ", kMaxGpusPerNode));
  }
  if (spec.script().empty()) return Invalid("the batch script is empty");
  if (spec.script().size() > kMaxScriptBytes) {
    return Invalid(absl::StrCat("the batch script is ", spec.script().size(),
                                " bytes; the limit is ", kMaxScriptBytes));
  }
  if (spec.script().rfind("#!", 0) != 0) {
    return Invalid(
        "this does not look like a batch script: the first line must start "
        "with #! followed by the path to an interpreter");
  }
  if (spec.script_args_size() > static_cast<int>(kMaxArgs)) {
    return Invalid("too many script arguments");
  }
  size_t environment_bytes = 0;
  for (const auto& [key, value] : spec.environment()) {
    environment_bytes += key.size() + value.size() + 2;
    if (key.empty() || key.find('=') != std::string::npos ||
        key.find('\0') != std::string::npos) {
      return Invalid(
          absl::StrCat("invalid environment variable name \"", key, "\""));
    }
  }
  if (environment_bytes > kMaxEnvironmentBytes) {
    return Invalid("the exported environment is larger than 1 MiB");
  }
  if (spec.name().size() > kMaxNameBytes)
    return Invalid("the job name is too long");
  for (const std::string* path : {&spec.working_dir(), &spec.output_pattern(),
                                  &spec.error_pattern(), &spec.submit_dir()}) {
    if (path->size() > kMaxPathBytes) return Invalid("a path is too long");
  }
  if (spec.working_dir().empty() || spec.working_dir()[0] != '/') {
    return Invalid("the working directory must be an absolute path");
  }
  if (spec.partition().empty()) spec.set_partition(DefaultPartition().name);
  const PartitionConfig* partition = FindPartition(spec.partition());
  if (partition == nullptr) {
    std::vector<std::string> names;
    for (const PartitionConfig& p : options_.partitions)
      names.push_back(p.name);
    return Invalid(absl::StrCat(
        "invalid partition name \"", spec.partition(),
        "\" (this cluster has: ", absl::StrJoin(names, ", "), ")"));
  }
  if (absl::Status restrictions = CheckNodeRestrictions(
          *partition,
          [this](const std::string& name) { return nodes_.count(name) > 0; },
          spec);
      !restrictions.ok()) {
    return restrictions;
  }
  if (absl::Status limits = ApplyPartitionLimits(*partition, spec);
      !limits.ok()) {
    return limits;
  }
  if (spec.warning_signal() < 0 || spec.warning_signal() > 64 ||
      spec.warning_signal_seconds() > 65535) {
    return Invalid(
        "--signal: the signal must be 1 to 64 and the time before the limit "
        "at most 65535 s");
  }
  if (spec.name().empty()) spec.set_name("script");
  if (!spec.dependency().empty()) {
    absl::StatusOr<JobDependency> dependency =
        ParseDependency(spec.dependency());
    if (!dependency.ok()) return dependency.status();
    for (DependencyTerm& term : dependency->terms) {
      if (term.kind == DependencyTerm::Kind::kSingleton) continue;
      if (term.array_task) {
        // ID_TASK: the task's own job (array tasks have consecutive ids
        // from the array's).
        auto it = jobs_.find(term.job_id);
        while (it != jobs_.end() &&
               it->second.record.array_job_id() == term.job_id &&
               it->second.record.array_task_id() != *term.array_task) {
          ++it;
        }
        if (it == jobs_.end() ||
            it->second.record.array_job_id() != term.job_id) {
          return Invalid(absl::StrCat("--dependency: array task ", term.job_id,
                                      "_", *term.array_task,
                                      " does not exist"));
        }
        term.job_id = it->first;
        term.array_task.reset();
      } else if (!jobs_.count(term.job_id)) {
        return Invalid(
            absl::StrCat("--dependency: job ", term.job_id, " does not exist"));
      }
    }
    spec.set_dependency(FormatDependency(*dependency));
  }
  if (!spec.checkpoint_dir().empty() && spec.checkpoint_dir()[0] != '/') {
    return Invalid("the checkpoint directory must be an absolute path");
  }
  if (spec.has_max_restarts() && spec.max_restarts() > 1000) {
    return Invalid("--max-restarts is above the limit of 1000");
  }
  if (!spec.array().empty()) {
    absl::StatusOr<JobArraySpec> array = ParseJobArray(spec.array());
    if (!array.ok()) {
      return Invalid(
          absl::StrCat("invalid value \"", spec.array().substr(0, 80),
                       "\" for --array: ", array.status().message()));
    }
    spec.set_array(FormatJobArray(*array));
    v1::JobArrayInfo& info = *job.mutable_array();
    info.set_task_count(static_cast<uint32_t>(array->task_ids.size()));
    info.set_min_task_id(array->min_task_id());
    info.set_max_task_id(array->max_task_id());
    info.set_step(array->step());
    info.set_max_running(array->max_running);
  }
  if (absl::Status size = CheckSubmissionSize(
          MeasureSubmission(spec, job.array().task_count()));
      !size.ok()) {
    return size;
  }
  // sbatch's slurm-%j.out and slurm-%A_%a.out, under Gantry's name.
  if (spec.output_pattern().empty()) {
    spec.set_output_pattern(spec.array().empty() ? "gantry-%j.out"
                                                 : "gantry-%A_%a.out");
  }
  // A job no node of the partition could ever hold is refused now rather
  // than left pending forever. With no node known yet (a cluster starting)
  // nothing can be judged.
  uint32_t capable = 0, known = 0, most_gpus = 0;
  for (const auto& [name, node] : nodes_) {
    if (node.record.hot_spare()) continue;
    const auto& partitions = node.record.partitions();
    if (std::find(partitions.begin(), partitions.end(), spec.partition()) ==
        partitions.end()) {
      continue;
    }
    const v1::NodeInventory& inventory = node.record.inventory();
    ++known;
    most_gpus =
        std::max(most_gpus, static_cast<uint32_t>(inventory.gpus_size()));
    if (inventory.gpus_size() >= static_cast<int>(spec.gpus_per_node()) &&
        inventory.cpus() >= spec.ntasks_per_node() * spec.cpus_per_task() &&
        (spec.mem_per_node_mb() == 0 ||
         inventory.memory_mb() >= spec.mem_per_node_mb())) {
      ++capable;
    }
  }
  if (known > 0 && spec.gpus_per_node() > most_gpus) {
    return Invalid(absl::StrCat("--gpus-per-node=", spec.gpus_per_node(),
                                " is more than any node of partition ",
                                spec.partition(), " has (", most_gpus, ")"));
  }
  if (known > 0 && capable < spec.nodes()) {
    return Invalid(absl::StrCat(
        "the job needs ", spec.nodes(), " node(s) with ",
        spec.ntasks_per_node() * spec.cpus_per_task(), " CPUs",
        spec.gpus_per_node() ? absl::StrCat(", ", spec.gpus_per_node(), " GPUs")
                             : "",
        spec.mem_per_node_mb()
            ? absl::StrCat(", ", spec.mem_per_node_mb(), " MB")
            : "",
        " each; partition ", spec.partition(), " has ", capable,
        " such node(s)"));
  }
  return job;
}

void Controller::Submit(v1::SubmitRequest request, const Caller& caller,
                        std::function<void(absl::StatusOr<uint64_t>)> done) {
  absl::StatusOr<v1::JobRecord> validated =
      ValidateSubmission(std::move(*request.mutable_spec()));
  if (!validated.ok() || request.validate_only()) {
    done(validated.ok() ? absl::StatusOr<uint64_t>(0) : validated.status());
    return;
  }
  // The job belongs to whoever proved to be asking, whatever it claims.
  validated->set_user(caller.user);
  validated->set_uid(caller.uid);
  validated->set_gid(caller.gid);
  // An array is one job per task, with consecutive ids, all staged in this
  // turn's batch: one synced write makes the whole array durable, and the
  // reply names the first id, the array's.
  std::vector<uint32_t> task_ids;
  if (!validated->spec().array().empty()) {
    absl::StatusOr<JobArraySpec> array =
        ParseJobArray(validated->spec().array());
    if (!array.ok()) {  // canonical text from ValidateSubmission
      done(array.status());
      return;
    }
    task_ids = std::move(array->task_ids);
  }
  const uint64_t first_id = next_job_id_;
  const size_t count = task_ids.empty() ? 1 : task_ids.size();
  // The environment is stored once, apart from the records (see
  // EnvironmentId), in the same batch, so it is durable with them; or not
  // at all when this user's last submissions stored the very same one.
  v1::JobEnvironment environment;
  environment.mutable_variables()->swap(
      *validated->mutable_spec()->mutable_environment());
  if (!environment.variables().empty()) {
    if (std::optional<uint64_t> stored = recent_environments_.FindOrRemember(
            caller.uid, first_id, environment.variables())) {
      validated->set_environment_id(*stored);
    } else {
      batch_.environments.emplace_back(first_id, std::move(environment));
    }
  }
  const std::string shape =
      absl::StrCat("user ", validated->user(), ", ", validated->spec().nodes(),
                   " node(s), ", TotalRanks(validated->spec()), " task(s)");
  for (size_t i = 0; i < count; ++i) {
    JobRuntime job;
    job.record = i + 1 < count ? *validated : std::move(*validated);
    const uint64_t id = next_job_id_++;
    job.record.set_id(id);
    std::string detail = shape;
    if (!task_ids.empty()) {
      job.record.set_array_job_id(first_id);
      job.record.set_array_task_id(task_ids[i]);
      absl::StrAppend(&detail, ", array ", first_id, "_", task_ids[i]);
    }
    job.record.set_state(v1::PENDING);
    job.record.set_submit_time_ms(clock_.NowMs());
    job.record.set_eligible_time_ms(job.record.spec().begin_time_ms());
    job.record.set_reason("None");
    if (job.record.spec().hold()) {
      job.record.set_held(true);
      MarkHeld(job.record);
    }
    job.record.set_output_path(
        ResolvePath(job.record.spec().output_pattern(), job.record));
    if (!job.record.spec().error_pattern().empty()) {
      job.record.set_error_path(
          ResolvePath(job.record.spec().error_pattern(), job.record));
    }
    StageJob(job);
    StageEvent(id, "", "submitted", detail);
    UpdateLive(jobs_.emplace(id, std::move(job)).first->second);
    if (options_.metrics) options_.metrics->JobAdded(JobStatus::kPending);
  }
  batch_.next_job_id = next_job_id_;
  const v1::JobRecord& first = jobs_.at(first_id).record;
  // Every submission is in the durable event log ("submitted"); a line
  // per job at info would be a write to the log per request.
  const log::Level level =
      task_ids.empty() ? log::Level::kDebug : log::Level::kInfo;
  if (log::Enabled(level)) {
    log::Write(level,
               task_ids.empty() ? "job submitted" : "job array submitted",
               {{"job", first_id},
                {"user", first.user()},
                {"name", first.spec().name()},
                {"nodes", first.spec().nodes()},
                {"tasks", TotalRanks(first.spec())},
                {"array", first.spec().array()}});
  }
  AfterCommit([done = std::move(done), first_id] {
    CrashPoint("gantryd.submit.after_commit_before_reply");
    done(first_id);
  });
  RequestSchedule();
}

Controller::JobRuntime* Controller::ManagedJobFor(uint64_t id,
                                                  const Caller& caller,
                                                  v1::CancelResult& result) {
  result.set_job_id(id);
  absl::StatusOr<JobRuntime*> job = ManagedJob(id, caller);
  if (!job.ok()) {
    result.set_error(std::string(job.status().message()));
    return nullptr;
  }
  return *job;
}

std::vector<uint64_t> Controller::ResolveTargets(
    const google::protobuf::RepeatedField<uint64_t>& job_ids,
    const v1::JobFilter& filter,
    google::protobuf::RepeatedPtrField<v1::CancelResult>& unknown) const {
  std::vector<uint64_t> ids(job_ids.begin(), job_ids.end());
  std::set<uint64_t> added;
  auto add = [&](uint64_t id) {
    if (added.insert(id).second) ids.push_back(id);
  };
  auto active = [](const JobRuntime& job) {
    return !IsTerminal(FromProto(job.record.state()));
  };
  if (FiltersByAttributes(filter)) {
    for (const auto& [id, job] : live_jobs_) {
      if (active(*job) && MatchesFilter(filter, job->record)) add(id);
    }
    return ids;
  }
  for (const v1::JobSelector& selector : filter.jobs()) {
    // The job itself, or the tasks of the array, which have consecutive
    // ids from the array's: only the pending and running ones.
    bool matched = false;
    for (auto it = live_jobs_.lower_bound(selector.job_id());
         it != live_jobs_.end() &&
         (it->first == selector.job_id() ||
          it->second->record.array_job_id() == selector.job_id());
         ++it) {
      if (active(*it->second) &&
          MatchesSelector(selector, it->second->record)) {
        add(it->first);
        matched = true;
      }
    }
    if (matched) continue;
    // Anything else goes on as given, so the answer says what is wrong with
    // it (finished, unknown, not the caller's).
    if (!selector.has_array_task_id()) {
      add(selector.job_id());
      continue;
    }
    for (auto it = jobs_.lower_bound(selector.job_id());
         it != jobs_.end() &&
         it->second.record.array_job_id() == selector.job_id();
         ++it) {
      if (MatchesSelector(selector, it->second.record)) {
        add(it->first);
        matched = true;
      }
    }
    if (matched) continue;
    const std::string name =
        absl::StrCat(selector.job_id(), "_", selector.array_task_id());
    v1::CancelResult* result = unknown.Add();
    result->set_selector(name);
    result->set_error(absl::StrCat("invalid job id ", name));
  }
  return ids;
}

void Controller::Cancel(const v1::CancelRequest& request, const Caller& caller,
                        std::function<void(v1::CancelResponse)> done) {
  v1::CancelResponse response;
  for (uint64_t id : ResolveTargets(request.job_ids(), request.filter(),
                                    *response.mutable_results())) {
    v1::CancelResult* result = response.add_results();
    JobRuntime* managed = ManagedJobFor(id, caller, *result);
    if (managed == nullptr) continue;
    JobRuntime& job = *managed;
    if (request.signal() != 0) {
      // scancel --signal: the ranks get the signal, the job's state is
      // whatever they do with it.
      if (request.signal() < 1 || request.signal() > 64) {
        result->set_error(absl::StrCat("invalid signal ", request.signal()));
        continue;
      }
      if (job.record.state() != v1::RUNNING) {
        result->set_error(absl::StrCat(
            "job ", id, " is not running, so it has no ranks to signal"));
        continue;
      }
      const v1::KillRanks::Scope scope =
          request.signal_target() == v1::CancelRequest::SIGNAL_BATCH_SCRIPT
              ? v1::KillRanks::SCOPE_BATCH_SCRIPT
          : request.signal_target() == v1::CancelRequest::SIGNAL_FULL ||
                  !job.record.spec().script_once()
              ? v1::KillRanks::SCOPE_ALL
              : v1::KillRanks::SCOPE_STEP_TASKS;
      SendKill(job, request.signal(), /*signal_only=*/true, scope);
      StageEvent(
          id, "", "signalled",
          absl::StrCat("signal ", request.signal(), " sent by ", caller.user));
      result->set_ok(true);
      continue;
    }
    absl::Status status =
        ApplyEvent(job, {JobEvent::Kind::kCancel},
                   absl::StrCat("cancelled by ", caller.user));
    if (!status.ok()) {
      result->set_error(absl::StrCat("job ", id, ": ", status.message()));
      continue;
    }
    result->set_ok(true);
  }
  AfterCommit([done = std::move(done), response = std::move(response)] {
    done(response);
  });
}

void Controller::Hold(const v1::HoldRequest& request, const Caller& caller,
                      std::function<void(v1::HoldResponse)> done) {
  const char* verb = request.release() ? "release" : "hold";
  v1::HoldResponse response;
  bool released_any = false;
  for (uint64_t id : ResolveTargets(request.job_ids(), request.filter(),
                                    *response.mutable_results())) {
    v1::CancelResult* result = response.add_results();
    JobRuntime* managed = ManagedJobFor(id, caller, *result);
    if (managed == nullptr) continue;
    JobRuntime& job = *managed;
    if (job.record.state() != v1::PENDING) {
      result->set_error(absl::StrCat(
          "job ", id, " is ", v1::JobState_Name(job.record.state()),
          ", not pending: only pending jobs can be held or released"));
      continue;
    }
    result->set_ok(true);
    if (job.record.held() == !request.release()) continue;  // already so
    job.record.set_held(!request.release());
    if (request.release()) {
      job.record.set_reason("None");
      job.record.clear_reason_detail();
      released_any = true;
    } else {
      MarkHeld(job.record);
    }
    StageJob(job);
    StageEvent(id, "", request.release() ? "released" : "held",
               absl::StrCat(verb, " by ", caller.user));
  }
  if (released_any) RequestSchedule();
  AfterCommit([done = std::move(done), response = std::move(response)] {
    done(response);
  });
}

void Controller::RequestSchedule() {
  if (schedule_posted_ || stopped_) return;
  schedule_posted_ = true;
  if (std::chrono::steady_clock::now() >= next_pass_allowed_) {
    boost::asio::post(io_, [this] { SchedulePass(); });
    return;
  }
  schedule_timer_.expires_at(next_pass_allowed_);
  schedule_timer_.async_wait([this](const boost::system::error_code& error) {
    if (!error && !stopped_) SchedulePass();
  });
}

std::shared_ptr<const NodeConstraint> Controller::ParsedConstraint(
    JobRuntime& job) {
  const std::string& text = job.record.spec().constraint();
  if (text.empty()) return nullptr;
  if (!job.constraint || job.constraint->text() != text) {
    absl::StatusOr<NodeConstraint> parsed = NodeConstraint::Parse(text);
    // Checked at submit; a damaged record matches no node rather than any.
    job.constraint = std::make_shared<const NodeConstraint>(
        parsed.ok() ? *std::move(parsed) : NodeConstraint());
  }
  return job.constraint;
}

void Controller::SchedulePass() {
  // A pass over a long queue is the dearest thing the loop does; while
  // triggers keep coming (a submission flood, a fleet registering) later
  // passes wait this many times the last one's duration, so they take at
  // most about a fifth of the loop and requests keep being served. A short
  // pass (a small queue) leaves no noticeable pause.
  constexpr int kSchedulingGapFactor = 4;
  const auto pass_start = std::chrono::steady_clock::now();
  RunSchedule();
  const auto pass_end = std::chrono::steady_clock::now();
  next_pass_allowed_ =
      pass_end + kSchedulingGapFactor * (pass_end - pass_start);
  if (options_.metrics) {
    options_.metrics->ObserveSchedulingPass(
        std::chrono::duration<double>(pass_end - pass_start).count());
  }
}

void Controller::RunSchedule() {
  schedule_posted_ = false;
  // Reused from pass to pass: with tens of thousands pending, a fresh
  // queue was megabytes of new memory to fault in on every pass.
  std::vector<PendingJob>& queue = pending_queue_;
  queue.clear();
  const int64_t now = clock_.NowMs();
  next_eligible_ms_ = 0;
  singleton_holders_.reset();  // rebuilt on first use in this pass
  std::size_t dependency_waiters = 0;
  // Throttled arrays (--array=...%N): how many more of their tasks may join
  // this pass's queue. Tasks are taken in id order, so the lowest indices
  // start first.
  std::map<uint64_t, uint32_t> array_slots;
  // The queued jobs in id order, for finding them from the result.
  std::vector<std::pair<uint64_t, JobRuntime*>> queued;
  // Grown geometrically (a reserve to the exact size would reallocate on
  // every pass while the queue grows).
  if (queue.capacity() < live_jobs_.size()) {
    queue.reserve(2 * live_jobs_.size());
  }
  queued.reserve(live_jobs_.size());
  for (auto& [id, live] : live_jobs_) {
    JobRuntime& job = *live;
    v1::JobRecord& record = job.record;
    if (record.state() != v1::PENDING) continue;
    if (record.held()) continue;  // its reason says so (MarkHeld)
    // A requeued job waits for its backoff and for the ranks of its last
    // attempt to be gone, so no two attempts ever run at once.
    if (!job.held_nodes.empty()) {
      record.set_reason("Restarting");
      record.set_reason_detail(absl::StrCat("waiting for the ranks of attempt ",
                                            record.attempt(), " to stop"));
      continue;
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
      if (next_eligible_ms_ == 0 ||
          record.eligible_time_ms() < next_eligible_ms_) {
        next_eligible_ms_ = record.eligible_time_ms();
      }
      continue;
    }
    const v1::JobSpec& spec = record.spec();
    if (!spec.dependency().empty() && !DependencyAllowsStart(job, now)) {
      ++dependency_waiters;
      continue;
    }
    if (record.array().max_running() > 0) {
      auto [slots, fresh] = array_slots.try_emplace(record.array_job_id(), 0);
      if (fresh) {
        const uint32_t running =
            RunningArrayTasks(jobs_, record.array_job_id());
        const uint32_t limit = record.array().max_running();
        slots->second = running < limit ? limit - running : 0;
      }
      if (slots->second == 0) {
        record.set_reason("JobArrayTaskLimit");
        record.set_reason_detail(
            absl::StrCat("array ", record.array_job_id(), " runs at most ",
                         record.array().max_running(),
                         " task(s) at once (--array=", spec.array(), ")"));
        continue;
      }
      --slots->second;
    }
    PendingJob& pending = queue.emplace_back();
    pending.id = id;
    pending.partition = spec.partition();
    pending.nodes = spec.nodes();
    pending.max_tasks_per_node = RanksOnNode(spec, 0);
    pending.cpus_per_task = spec.cpus_per_task();
    pending.gpus_per_node = spec.gpus_per_node();
    pending.mem_per_node_mb = spec.mem_per_node_mb();
    pending.is_restart = record.attempt() > 0;
    pending.user = record.user();
    pending.submit_time_ms = record.submit_time_ms();
    pending.time_limit_ms =
        static_cast<int64_t>(spec.time_limit_seconds()) * 1000;
    pending.exclusive = spec.exclusive();
    SetNodeRestrictions(spec, ParsedConstraint(job), pending);
    pending.max_switches = spec.max_switches();
    if (spec.max_switches() > 0 && spec.switches_max_wait_seconds() > 0) {
      pending.switches_deadline_ms =
          record.submit_time_ms() +
          static_cast<int64_t>(spec.switches_max_wait_seconds()) * 1000;
    }
    queued.emplace_back(id, &job);
  }
  if (queue.empty()) return;
  // The node snapshot only when there is something to place: every
  // registration asks for a pass, and a fleet of thousands registering
  // would otherwise pay for the whole table each time.
  std::vector<NodeSnapshot> snapshot;
  std::vector<const std::string*> names;
  for (const auto& [name, node] : nodes_) {
    const v1::NodeInventory& inventory = node.record.inventory();
    NodeSnapshot s;
    s.name = name;
    s.schedulable = node.record.state() == v1::NODE_UP &&
                    node.link != nullptr && !node.record.drained() &&
                    node.record.health_problems().empty();
    s.hot_spare = node.record.hot_spare();
    s.partitions = {node.record.partitions().begin(),
                    node.record.partitions().end()};
    s.cpus_total = inventory.cpus();
    s.cpus_free = inventory.cpus() > node.cpus_used
                      ? inventory.cpus() - node.cpus_used
                      : 0;
    s.gpus_total = static_cast<uint32_t>(inventory.gpus_size());
    for (const v1::GpuInfo& gpu : inventory.gpus()) {
      if (!node.gpus_used.count(gpu.index()))
        s.free_gpus.push_back(gpu.index());
    }
    for (const v1::GpuInfo& gpu : inventory.gpus()) {
      if (gpu.index() >= s.gpu_hca.size()) s.gpu_hca.resize(gpu.index() + 1);
      s.gpu_hca[gpu.index()] = gpu.nearest_hca();
    }
    if (topology_) s.switch_path = SwitchPath(topology_->topology, name);
    s.features = {node.record.features().begin(), node.record.features().end()};
    for (const v1::GpuInfo& gpu : inventory.gpus()) {
      s.gpu_models.push_back(absl::AsciiStrToLower(gpu.model()));
    }
    s.mem_total_mb = inventory.memory_mb();
    s.mem_free_mb = inventory.memory_mb() > node.mem_used_mb
                        ? inventory.memory_mb() - node.mem_used_mb
                        : 0;
    snapshot.push_back(std::move(s));
    names.push_back(&name);
  }
  auto queued_job = [&queued](uint64_t id) -> JobRuntime& {
    auto it = std::lower_bound(
        queued.begin(), queued.end(), id,
        [](const auto& entry, uint64_t key) { return entry.first < key; });
    return *it->second;
  };
  OrderQueue(queue, fair_share_, options_.priority_weights, now);
  for (const PendingJob& pending : queue) {
    queued_job(pending.id).priority = pending.priority;
  }
  ScheduleResult result = Schedule(snapshot, queue, RunningJobs(names),
                                   SchedulerOptions{true, true, now});
  // A job that starts now may release an `after` dependency: look again.
  if (dependency_waiters > 0 && !result.starts.empty()) RequestSchedule();
  for (JobWait& wait : result.waits) {
    v1::JobRecord& record = queued_job(wait.job_id).record;
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
    v1::JobRecord& record = job.record;
    record.clear_allocation();
    uint32_t next_rank = 0;
    for (size_t i = 0; i < start.shares.size(); ++i) {
      const NodeShare& share = start.shares[i];
      v1::NodeAllocation* allocation = record.add_allocation();
      allocation->set_node(*names[share.node_index]);
      allocation->set_cpus(share.cpus);
      for (uint32_t gpu : share.gpus) allocation->add_gpu_indices(gpu);
      allocation->set_mem_mb(share.mem_mb);
      allocation->set_first_rank(next_rank);
      allocation->set_rank_count(
          RanksOnNode(record.spec(), static_cast<uint32_t>(i)));
      next_rank += allocation->rank_count();
    }
    StartJob(job);
  }
}

// Usage for fair share: GPU-seconds (CPU-seconds for CPU-only jobs) of
// every attempt (a failed attempt held its GPUs too), charged at the end.
void Controller::ChargeUsage(const v1::JobRecord& record) {
  ChargeUsage(record, fair_share_);
}

void Controller::ChargeUsage(const v1::JobRecord& record,
                             FairShare& share) const {
  double units = 0;
  for (const v1::NodeAllocation& allocation : record.allocation()) {
    units += allocation.gpu_indices_size() > 0 ? allocation.gpu_indices_size()
                                               : allocation.cpus();
  }
  int64_t held_ms = 0;
  for (const v1::AttemptRecord& attempt : record.attempts()) {
    if (attempt.start_time_ms() > 0 && attempt.end_time_ms() > 0) {
      held_ms +=
          std::max<int64_t>(0, attempt.end_time_ms() - attempt.start_time_ms());
    }
  }
  if (held_ms == 0 && record.start_time_ms() > 0) {
    held_ms =
        std::max<int64_t>(0, record.end_time_ms() - record.start_time_ms());
  }
  if (units == 0 || held_ms == 0) return;
  share.AddUsage(record.user(), units * (held_ms / 1000.0),
                 record.end_time_ms());
}

const PartitionConfig* Controller::FindPartition(
    const std::string& name) const {
  for (const PartitionConfig& partition : options_.partitions) {
    if (partition.name == name) return &partition;
  }
  return nullptr;
}

const PartitionConfig& Controller::DefaultPartition() const {
  for (const PartitionConfig& partition : options_.partitions) {
    if (partition.is_default) return partition;
  }
  return options_.partitions.front();
}

void Controller::AssignPartitions(v1::NodeRecord& record) const {
  record.clear_partitions();
  for (const PartitionConfig& partition : options_.partitions) {
    if (partition.Contains(record.name())) {
      record.add_partitions(partition.name);
    }
  }
  record.set_hot_spare(options_.hot_spares.count(record.name()) > 0);
}

absl::Status Controller::ApplyPartitionLimits(const PartitionConfig& partition,
                                              v1::JobSpec& spec) const {
  if (spec.time_limit_seconds() == 0) {
    spec.set_time_limit_seconds(partition.ImplicitTimeLimit());
  } else if (partition.max_time_seconds > 0 &&
             spec.time_limit_seconds() > partition.max_time_seconds) {
    return absl::InvalidArgumentError(
        absl::StrCat("--time=", FormatTimeLimit(spec.time_limit_seconds()),
                     " is above partition ", partition.name,
                     "'s MaxTime=", FormatTimeLimit(partition.max_time_seconds),
                     "; ask for less time or another partition"));
  }
  if (partition.max_nodes > 0 && spec.nodes() > partition.max_nodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("--nodes=", spec.nodes(), " is above partition ",
                     partition.name, "'s MaxNodes=", partition.max_nodes));
  }
  return absl::OkStatus();
}

// Whether a pending job's --dependency lets it start now; if not, sets its
// reason (Dependency, or DependencyNeverSatisfied as Slurm says when it
// never will) and, for after+MIN, when to look again.
bool Controller::DependencyAllowsStart(JobRuntime& job, int64_t now) {
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
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return std::nullopt;
    if (it->second.record.array_job_id() != id) {
      return depended_of(it->second.record);
    }
    // An array's id stands for all its tasks, as in Slurm: started when
    // all have started, ended when all have ended, COMPLETED when all did.
    DependedJob all;
    bool pending = false, running = false, failed = false;
    for (; it != jobs_.end() && it->second.record.array_job_id() == id; ++it) {
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
      for (const auto& [id, other] : jobs_) {
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
      if (verdict.ready_at_ms > 0 &&
          (next_eligible_ms_ == 0 || verdict.ready_at_ms < next_eligible_ms_)) {
        next_eligible_ms_ = verdict.ready_at_ms;
      }
      return false;
  }
  return false;
}

// What the running jobs hold and until when, for backfill reservations.
std::vector<RunningJob> Controller::RunningJobs(
    const std::vector<const std::string*>& node_names) const {
  std::map<std::string_view, std::size_t> index_of;
  for (std::size_t i = 0; i < node_names.size(); ++i) {
    index_of[*node_names[i]] = i;
  }
  std::vector<RunningJob> running;
  for (const auto& [id, live] : live_jobs_) {
    const JobRuntime& job = *live;
    const v1::JobRecord& record = job.record;
    // A job that ended (or is being requeued) still holds its nodes until
    // its ranks are gone, at the latest a kill grace from now.
    const bool stopping =
        record.state() != v1::RUNNING && !job.held_nodes.empty();
    if (record.state() != v1::RUNNING && !stopping) continue;
    RunningJob r;
    r.id = id;
    r.exclusive = record.spec().exclusive();
    const int64_t limit_ms =
        static_cast<int64_t>(record.spec().time_limit_seconds()) * 1000;
    if (stopping) {
      r.expected_end_ms =
          clock_.NowMs() + int64_t{options_.kill_grace_seconds} * 1000;
    } else {
      r.expected_end_ms = limit_ms > 0 ? record.start_time_ms() + limit_ms
                                       : std::numeric_limits<int64_t>::max();
    }
    for (const v1::NodeAllocation& allocation : record.allocation()) {
      if (stopping && !job.held_nodes.count(allocation.node())) continue;
      auto it = index_of.find(allocation.node());
      if (it == index_of.end()) continue;
      NodeShare share;
      share.node_index = it->second;
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

void Controller::StartJob(JobRuntime& job) {
  v1::JobRecord& record = job.record;
  record.set_attempt(record.attempt() + 1);
  record.set_start_time_ms(clock_.NowMs());
  record.set_master_port(
      ChooseMasterPort(cluster_id_, record.id(), record.attempt()));
  record.set_reason("None");
  record.clear_reason_detail();
  record.clear_exits();
  record.set_last_progress_ms(record.start_time_ms());
  v1::AttemptRecord* attempt = record.add_attempts();
  attempt->set_attempt(record.attempt());
  attempt->set_start_time_ms(record.start_time_ms());
  attempt->set_resumed_from(record.latest_checkpoint().path());
  for (const v1::NodeAllocation& share : record.allocation()) {
    attempt->add_nodes(share.node());
  }
  if (options_.metrics) {
    // A restart waited from the end of the attempt before it.
    const int64_t queued_ms =
        record.attempts_size() > 1
            ? record.attempts(record.attempts_size() - 2).end_time_ms()
            : record.submit_time_ms();
    options_.metrics->ObserveQueueWait(
        static_cast<double>(std::max<int64_t>(0, clock_.NowMs() - queued_ms)) /
        1000.0);
  }
  job.exited_ranks.clear();
  job.live_ranks.clear();
  record.clear_steps();
  job.step_waiters.clear();
  job.step_first_exit_ms.clear();
  std::vector<std::string> node_names;
  for (int i = 0; i < record.allocation_size(); ++i) {
    job.live_ranks[record.allocation(i).node()] = ScriptRanksOn(record, i);
    node_names.push_back(record.allocation(i).node());
  }
  absl::Status status = ApplyEvent(job, {JobEvent::Kind::kStart}, "");
  if (!status.ok()) {
    log::Error("scheduler chose a job that cannot start",
               {{"job", record.id()}, {"error", status.ToString()}});
    return;
  }
  HoldResources(job);
  std::string nodelist = absl::StrJoin(node_names, ",");
  StageEvent(record.id(), "", "started",
             absl::StrCat(
                 "attempt ", record.attempt(), " on ", nodelist,
                 record.latest_checkpoint().path().empty()
                     ? ""
                     : ", resuming from " + record.latest_checkpoint().path()));
  log::Info("job started", {{"job", record.id()},
                            {"attempt", record.attempt()},
                            {"nodes", nodelist}});
  AfterCommit([this, id = record.id(), attempt = record.attempt()] {
    CrashPoint("gantryd.start.after_commit_before_launch");
    SendLaunch(id, attempt);
    CrashPoint("gantryd.start.after_launch_sent");
  });
}

void Controller::SendLaunch(uint64_t job_id, uint32_t attempt,
                            const std::string* only_node) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  const v1::JobRecord& record = it->second.record;
  // Cancelled (or otherwise ended) before the launch went out.
  if (record.state() != v1::RUNNING || record.attempt() != attempt) return;
  // Records stored before JobEnvironment existed carry it inline.
  google::protobuf::Map<std::string, std::string> stored;
  const google::protobuf::Map<std::string, std::string>* environment =
      &record.spec().environment();
  if (environment->empty()) {
    absl::StatusOr<v1::JobEnvironment> loaded =
        store_.Environment(EnvironmentId(record));
    if (!loaded.ok()) {
      // Running it without the environment it was submitted with would
      // be worse than not running it.
      log::Error("cannot read a job's environment; cancelling it",
                 {{"job", job_id}, {"error", loaded.status().ToString()}});
      (void)ApplyEvent(it->second, {JobEvent::Kind::kCancel},
                       absl::StrCat("its stored environment cannot be read: ",
                                    loaded.status().message()));
      return;
    }
    stored.swap(*loaded->mutable_variables());
    environment = &stored;
  }
  const std::string& first_node = record.allocation(0).node();
  std::string master_addr = nodes_.at(first_node).record.address();
  for (int i = 0; i < record.allocation_size(); ++i) {
    const v1::NodeAllocation& share = record.allocation(i);
    // script_once: the script on the first node only; the other nodes
    // wait for its steps.
    const uint32_t script_ranks = ScriptRanksOn(record, i);
    if (script_ranks == 0) continue;
    if (only_node != nullptr && share.node() != *only_node) continue;
    NodeRuntime& node = nodes_.at(share.node());
    if (!node.link) {
      // The node dropped between placement and launch; the deadline check
      // fails the job if it does not come back with these ranks.
      log::Warn("node unreachable at launch",
                {{"job", job_id}, {"node", share.node()}});
      continue;
    }
    v1::ControllerMessage message;
    v1::LaunchRanks& launch = *message.mutable_launch();
    launch.set_job_id(job_id);
    launch.set_attempt(attempt);
    launch.set_job_name(record.spec().name());
    launch.set_script(record.spec().script());
    *launch.mutable_script_args() = record.spec().script_args();
    launch.set_working_dir(record.spec().working_dir());
    launch.set_output_path(record.output_path());
    // As sbatch: the first run's batch script starts the files afresh
    // (unless --open-mode=append), a restart appends. In --per-task mode
    // tasks on many nodes share the files, so they only ever append.
    launch.set_truncate_output(record.spec().script_once() &&
                               !record.spec().append_output() &&
                               record.attempts_size() <= 1);
    launch.set_error_path(record.error_path());
    launch.set_uid(record.uid());
    launch.set_gid(record.gid());
    launch.set_user(record.user());
    // The node's share bounds the job's cgroup there.
    launch.set_cpus(share.cpus());
    launch.set_mem_mb(share.mem_mb());
    launch.set_checkpoint_dir(record.spec().checkpoint_dir());
    // Rank 0's node watches for framework checkpoint markers.
    launch.set_watch_checkpoints(i == 0 &&
                                 !record.spec().checkpoint_dir().empty());
    *launch.mutable_job_environment() = *environment;
    for (uint32_t local = 0; local < script_ranks; ++local) {
      v1::RankLaunch* rank = launch.add_ranks();
      rank->set_rank(share.first_rank() + local);
      for (auto& [key, value] : BuildRankEnvironment(
               record, master_addr, static_cast<uint32_t>(i), local)) {
        (*rank->mutable_environment())[key] = value;
      }
    }
    node.link->Send(message);
  }
}

void Controller::SendKill(const JobRuntime& job, int signal, bool signal_only,
                          v1::KillRanks::Scope scope) {
  for (const auto& [node_name, live] : job.live_ranks) {
    if (live == 0) continue;
    auto it = nodes_.find(node_name);
    if (it == nodes_.end() || !it->second.link) continue;
    v1::ControllerMessage message;
    v1::KillRanks& kill = *message.mutable_kill();
    kill.set_job_id(job.record.id());
    kill.set_attempt(job.record.attempt());
    kill.set_signal(signal);
    kill.set_grace_seconds(options_.kill_grace_seconds);
    kill.set_signal_only(signal_only);
    kill.set_scope(scope);
    it->second.link->Send(message);
  }
}

absl::Status Controller::ApplyEvent(JobRuntime& job, const JobEvent& event,
                                    const std::string& detail) {
  v1::JobRecord& record = job.record;
  const JobStatus before = FromProto(record.state());
  absl::StatusOr<JobTransition> transition = ApplyJobEvent(before, event);
  if (!transition.ok()) return transition.status();
  if (transition->next == before && transition->effects.empty()) {
    return absl::OkStatus();
  }
  record.set_state(ToProto(transition->next));
  UpdateLive(job);
  if (options_.metrics) options_.metrics->JobMoved(before, transition->next);
  for (JobEffect effect : transition->effects) {
    switch (effect) {
      case JobEffect::kLaunchRanks:
        break;  // StartJob sends the launch once the start is durable
      case JobEffect::kKillRanks:
        AfterCommit([this, id = record.id(), kind = event.kind,
                     requeue = event.requeue] {
          if (requeue) {
            CrashPoint("gantryd.requeue.after_commit_before_kill");
          } else if (kind == JobEvent::Kind::kCancel) {
            CrashPoint("gantryd.cancel.after_commit_before_kill");
          }
          auto it = jobs_.find(id);
          if (it != jobs_.end()) SendKill(it->second);
        });
        break;
      case JobEffect::kRecordAttemptEnd:
        if (record.attempts_size() > 0) {
          v1::AttemptRecord* attempt =
              record.mutable_attempts(record.attempts_size() - 1);
          attempt->set_end_time_ms(clock_.NowMs());
          attempt->set_end_reason(
              transition->reason.empty() ? "Completed" : transition->reason);
          attempt->set_end_detail(detail);
        }
        break;
      case JobEffect::kRequeue:
        if (options_.metrics) {
          options_.metrics->CountRestart(transition->reason);
        }
        record.set_reason("Restarting");
        record.set_reason_detail(detail);
        StageEvent(record.id(), "", "requeued",
                   absl::StrCat("attempt ", record.attempt(), " ended (",
                                transition->reason, "): ", detail));
        log::Warn("job requeued", {{"job", record.id()},
                                   {"attempt", record.attempt()},
                                   {"reason", transition->reason},
                                   {"detail", detail}});
        RequestSchedule();
        break;
      case JobEffect::kRecordEnd:
        record.set_end_time_ms(clock_.NowMs());
        record.set_reason(transition->reason.empty() ? "None"
                                                     : transition->reason);
        record.set_reason_detail(detail);
        ++finished_jobs_;
        ChargeUsage(record);
        finished_order_.emplace_back(clock_.NowMs(), record.id());
        RequestSchedule();  // jobs may depend on this one
        StageEvent(record.id(), "",
                   absl::AsciiStrToLower(JobStatusName(transition->next)),
                   detail);
        log::Info("job ended", {{"job", record.id()},
                                {"state", JobStatusName(transition->next)},
                                {"detail", detail}});
        break;
    }
  }
  if (before == JobStatus::kRunning && transition->next != before) {
    // The attempt is over: so are its steps, and step tasks still running
    // on other nodes (the script ended before them) are stopped.
    EndOpenSteps(job, "the job's attempt ended: " + detail);
    const bool killing =
        std::find(transition->effects.begin(), transition->effects.end(),
                  JobEffect::kKillRanks) != transition->effects.end();
    if (!killing) {
      AfterCommit([this, id = record.id()] {
        auto it = jobs_.find(id);
        if (it != jobs_.end()) SendKill(it->second);
      });
    }
  }
  StageJob(job);
  if (transition->next != JobStatus::kRunning) ReleaseFinished(job);
  return absl::OkStatus();
}

bool Controller::JobNeedsNode(const JobRuntime& job,
                              const std::string& node) const {
  auto live = job.live_ranks.find(node);
  if (live != job.live_ranks.end() && live->second > 0) return true;
  if (job.record.state() != v1::RUNNING || !job.record.spec().script_once()) {
    return false;
  }
  for (const v1::NodeAllocation& share : job.record.allocation()) {
    if (share.node() == node) return true;
  }
  return false;
}

void Controller::FailJob(JobRuntime& job, FailureKind kind, int exit_code,
                         int signal, bool all_ranks_exited,
                         const std::string& detail) {
  v1::JobRecord& record = job.record;
  if (record.state() != v1::RUNNING) return;
  RestartInput input;
  input.kind = kind;
  // Attempts our own crashes lost are not the job's to pay for.
  input.attempts_started =
      record.attempt() -
      std::min(record.attempt(), record.uncharged_attempts());
  input.max_restarts = record.spec().has_max_restarts()
                           ? record.spec().max_restarts()
                           : options_.default_max_restarts;
  input.exit_code = exit_code;
  input.signal = signal;
  input.repeated_app_failures = record.repeated_app_failures();
  input.previous_exit_code = record.exit_code();
  input.previous_signal = record.exit_signal();
  input.backoff_base_ms = options_.restart_backoff_ms;
  RestartDecision decision = DecideRestart(input);
  if (kind == FailureKind::kOwnCrash) {
    // Neither the job's nor a node's doing: no charge, and the count of
    // identical application failures in a row goes on across it.
    record.set_uncharged_attempts(record.uncharged_attempts() + 1);
  } else {
    record.set_repeated_app_failures(
        IsApplicationFailure(kind) ? decision.repeated_app_failures : 0);
  }
  if (IsApplicationFailure(kind)) {
    record.set_exit_code(exit_code);
    record.set_exit_signal(signal);
  }
  if (record.attempts_size() > 0) {
    record.mutable_attempts(record.attempts_size() - 1)
        ->set_node_fault(kind == FailureKind::kNodeFault);
  }
  JobEvent event{JobEvent::Kind::kRankExited};
  switch (kind) {
    case FailureKind::kApplication:
    case FailureKind::kOutOfMemory:
      event.exit_code = exit_code != 0 || signal != 0 ? exit_code : 1;
      event.signal = signal;
      event.out_of_memory = kind == FailureKind::kOutOfMemory;
      event.all_ranks_exited = all_ranks_exited;
      break;
    case FailureKind::kNodeFault:
    case FailureKind::kOwnCrash:
      event.kind = JobEvent::Kind::kNodeLost;
      break;
    case FailureKind::kHang:
      event.kind = JobEvent::Kind::kHang;
      break;
    case FailureKind::kTimeLimit:
      event.kind = JobEvent::Kind::kTimeLimit;
      break;
    case FailureKind::kCancelled:
      event.kind = JobEvent::Kind::kCancel;
      break;
  }
  event.requeue = decision.restart;
  if (decision.restart) {
    record.set_eligible_time_ms(clock_.NowMs() + decision.backoff_ms);
  }
  std::string full_detail = detail;
  if (!decision.final_detail.empty()) {
    full_detail += "; " + decision.final_detail;
  }
  (void)ApplyEvent(job, event, full_detail);
}

void Controller::HoldResources(JobRuntime& job) {
  for (const v1::NodeAllocation& share : job.record.allocation()) {
    auto it = nodes_.find(share.node());
    if (it == nodes_.end()) continue;
    NodeRuntime& node = it->second;
    node.cpus_used += share.cpus();
    node.mem_used_mb += share.mem_mb();
    for (uint32_t gpu : share.gpu_indices()) node.gpus_used.insert(gpu);
    job.held_nodes.insert(share.node());
  }
  UpdateLive(job);
}

void Controller::ReleaseNodeShare(JobRuntime& job,
                                  const std::string& node_name) {
  if (!job.held_nodes.erase(node_name)) return;
  UpdateLive(job);
  auto it = nodes_.find(node_name);
  if (it == nodes_.end()) return;
  NodeRuntime& node = it->second;
  for (const v1::NodeAllocation& share : job.record.allocation()) {
    if (share.node() != node_name) continue;
    node.cpus_used -= std::min(node.cpus_used, share.cpus());
    node.mem_used_mb -= std::min(node.mem_used_mb, share.mem_mb());
    for (uint32_t gpu : share.gpu_indices()) node.gpus_used.erase(gpu);
  }
  RequestSchedule();
}

void Controller::ReleaseFinished(JobRuntime& job) {
  // A node's share is free once the job (or its attempt) is over and its
  // ranks there are gone; until then new work could collide with a rank
  // still stopping.
  if (job.record.state() == v1::RUNNING) return;
  std::vector<std::string> releasable;
  for (const std::string& node : job.held_nodes) {
    auto live = job.live_ranks.find(node);
    auto runtime = nodes_.find(node);
    bool node_down = runtime == nodes_.end() ||
                     runtime->second.record.state() == v1::NODE_DOWN;
    if (live == job.live_ranks.end() || live->second == 0 || node_down) {
      releasable.push_back(node);
    }
  }
  for (const std::string& node : releasable) ReleaseNodeShare(job, node);
}

}  // namespace gantry
