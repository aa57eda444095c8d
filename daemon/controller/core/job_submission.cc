// Submission (job_submission.h): checking a spec, staging its jobs,
// answering once they are durable.
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/crash_point.h"
#include "common/filename_pattern.h"
#include "common/job_array.h"
#include "common/job_dependency.h"
#include "common/log.h"
#include "common/option_values.h"
#include "common/request_limits.h"
#include "daemon/controller/core/controller_metrics.h"
#include "daemon/controller/core/gpu_type_census.h"
#include "daemon/controller/core/job_state_proto.h"
#include "daemon/controller/core/job_submission.h"
#include "daemon/controller/core/request_validation.h"
#include "daemon/controller/core/scheduling_input.h"
#include "daemon/controller/core/submission_size.h"
#include "daemon/controller/core/submission_spread.h"
#include "daemon/controller/core/user_hold.h"
#include "daemon/launch/node_restrictions.h"
#include "daemon/launch/step_layout.h"
#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/job_deadline.h"
#include "daemon/scheduler/scheduler.h"

namespace gantry {
namespace {

// Limits on what one submission may carry: large enough for any real job,
// small enough that a malformed or hostile request cannot exhaust the
// controller.
constexpr size_t kMaxScriptBytes = limits::kMaxBatchScriptBytes;
constexpr size_t kMaxEnvironmentBytes = 1 << 20;
constexpr size_t kMaxArgs = 4096;
constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxPathBytes = 4096;

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(message);
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

// "4", or "3-4" for --nodes=3-4.
std::string NodeRangeText(const v1::JobSpec& spec) {
  return spec.min_nodes() > 0
             ? absl::StrCat(spec.min_nodes(), "-", spec.nodes())
             : absl::StrCat(spec.nodes());
}

}  // namespace

JobSubmission::JobSubmission(Parts parts) : parts_(parts) {}

void JobSubmission::OnStateLoaded(int64_t started_ms) {
  started_ms_ = started_ms;
  for (const auto& [id, job] : parts_.state.jobs) {
    if (!job.record.submission_token().empty()) {
      submission_tokens_[{job.record.uid(), job.record.submission_token()}] =
          id;
    }
  }
}

void JobSubmission::OnJobRetired(const v1::JobRecord& record) {
  if (!record.submission_token().empty()) {
    submission_tokens_.erase({record.uid(), record.submission_token()});
  }
}

absl::StatusOr<v1::JobRecord> JobSubmission::Validate(
    v1::JobSpec submitted) const {
  if (absl::Status fields = ValidateJobSpecFields(submitted); !fields.ok()) {
    return fields;
  }
  v1::JobRecord job;
  v1::JobSpec& spec = *job.mutable_spec();
  spec.Swap(&submitted);
  // No -N: one node, unless -n asks for more tasks than a node's CPUs take
  // (below, once the partition's nodes are known).
  const bool nodes_given = spec.nodes() != 0;
  const bool per_node_given = spec.ntasks_per_node() != 0;
  if (spec.nodes() == 0) spec.set_nodes(1);
  if (spec.nodes() > limits::kMaxNodes) {
    return Invalid(absl::StrCat("--nodes=", spec.nodes(),
                                " is above the limit of ", limits::kMaxNodes));
  }
  if (!nodes_given && spec.min_nodes() > 0) {
    return Invalid(absl::StrCat("a node range needs its maximum: min_nodes=",
                                spec.min_nodes(), " with no nodes"));
  }
  if (spec.min_nodes() > spec.nodes()) {
    return Invalid(absl::StrCat("--nodes=", spec.min_nodes(), "-", spec.nodes(),
                                ": range maximum is below minimum"));
  }
  // A range of one size is no range: stored as a fixed size, so the job
  // behaves exactly as one without.
  if (spec.min_nodes() == spec.nodes()) spec.set_min_nodes(0);
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
  if (spec.ntasks_per_node() > limits::kMaxTasksPerNode) {
    return Invalid(absl::StrCat("--ntasks-per-node=", spec.ntasks_per_node(),
                                " is above the limit of ",
                                limits::kMaxTasksPerNode));
  }
  if (spec.cpus_per_task() == 0) spec.set_cpus_per_task(1);
  if (spec.cpus_per_task() > limits::kMaxCpusPerTask) {
    return Invalid(absl::StrCat("--cpus-per-task=", spec.cpus_per_task(),
                                " is above the limit of ",
                                limits::kMaxCpusPerTask));
  }
  if (spec.gpus() > limits::kMaxGpusPerJob) {
    return Invalid(absl::StrCat("--gpus=", spec.gpus(),
                                " is above the limit of ",
                                limits::kMaxGpusPerJob));
  }
  if (spec.mem_per_gpu_mb() > limits::kMaxMemoryPerNodeMb) {
    return Invalid("--mem-per-gpu is above 1 PiB");
  }
  if (spec.gpus_per_node() > limits::kMaxGpusPerNode) {
    return Invalid(absl::StrCat("--gpus-per-node=", spec.gpus_per_node(),
                                " is above the limit of ",
                                limits::kMaxGpusPerNode));
  }
  if (spec.allocation_only()) {
    // srun/salloc: nothing to run at the start; an allocation is never
    // run again after a failure (its client is gone by then).
    if (!spec.script().empty() || spec.script_args_size() > 0) {
      return Invalid("an allocation (srun, salloc) has no batch script");
    }
    if (!spec.array().empty()) {
      return Invalid("an allocation (srun, salloc) cannot be a job array");
    }
    spec.set_script_once(true);
    spec.set_max_restarts(0);
  } else if (spec.script().empty()) {
    return Invalid("the batch script is empty");
  }
  if (spec.script().size() > kMaxScriptBytes) {
    return Invalid(absl::StrCat("the batch script is ", spec.script().size(),
                                " bytes; the limit is ", kMaxScriptBytes));
  }
  if (!spec.allocation_only() && spec.script().rfind("#!", 0) != 0) {
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
  // Names only (no limits here), filled as Slurm fills them: the site's
  // default account, the default QOS.
  if (spec.account().empty()) spec.set_account(parts_.options.default_account);
  if (spec.qos().empty()) spec.set_qos(kDefaultQos);
  const PartitionConfig* partition = FindPartition(spec.partition());
  if (partition == nullptr) {
    std::vector<std::string> names;
    for (const PartitionConfig& p : parts_.options.partitions)
      names.push_back(p.name);
    return Invalid(absl::StrCat(
        "invalid partition name \"", spec.partition(),
        "\" (this cluster has: ", absl::StrJoin(names, ", "), ")"));
  }
  if (absl::Status restrictions = CheckNodeRestrictions(
          *partition,
          [this](const std::string& name) {
            return parts_.state.nodes.count(name) > 0;
          },
          spec);
      !restrictions.ok()) {
    return restrictions;
  }
  if (absl::Status limits = ApplyPartitionLimits(*partition, spec);
      !limits.ok()) {
    return limits;
  }
  if (absl::Status deadline =
          CheckDeadline(parts_.clock.NowMs(), spec.deadline_ms(),
                        spec.begin_time_ms(), spec.time_limit_seconds() * 1000);
      !deadline.ok()) {
    return deadline;
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
        auto it = parts_.state.jobs.find(term.job_id);
        while (it != parts_.state.jobs.end() &&
               it->second.record.array_job_id() == term.job_id &&
               it->second.record.array_task_id() != *term.array_task) {
          ++it;
        }
        if (it == parts_.state.jobs.end() ||
            it->second.record.array_job_id() != term.job_id) {
          return Invalid(absl::StrCat("--dependency: array task ", term.job_id,
                                      "_", *term.array_task,
                                      " does not exist"));
        }
        term.job_id = it->first;
        term.array_task.reset();
      } else if (!parts_.state.jobs.count(term.job_id)) {
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
  // than left pending forever, by the scheduler's own test (NodeCouldEverHold)
  // on the job as the scheduler will see it. With no node known yet (a cluster
  // starting) nothing can be judged.
  PendingJob pending = PendingJobOf(job, nullptr);
  uint32_t capable = 0, known = 0, most_gpus = 0;
  NodeSnapshot capacity;
  // As Slurm: with no -N, -n N and -G/--gpus=G take as many nodes as the
  // partition's largest nodes need for them.
  LargestNodes largest;
  const bool typed = !pending.gpu_type.empty();
  for (const auto& [name, node] : parts_.state.nodes) {
    SetNodeCapacity(node.record, capacity);
    if (typed) SetGpuTypes(node.record, capacity);
    largest.Add(capacity, pending);
  }
  if (absl::Status spread = ApplyJobSpread(largest, nodes_given, per_node_given,
                                           limits::kMaxNodes, spec);
      !spread.ok()) {
    return spread;
  }
  pending = PendingJobOf(job, nullptr);
  // No job spans parts of the fabric that no switch joins, nor mixes
  // nodes outside the tree with listed ones (fabric_parts.h).
  PartTally parts;
  // --gres=gpu:TYPE:N: only nodes that could have the type count below.
  GpuTypeCensus gpu_types(pending);
  for (const auto& [name, node] : parts_.state.nodes) {
    SetNodeCapacity(node.record, capacity);
    if (typed) SetGpuTypes(node.record, capacity);
    const bool could_have_type = gpu_types.Add(
        capacity, typed && GpuTypesMayChange(
                               node.record, started_ms_, parts_.clock.NowMs(),
                               parts_.options.reconnect_grace_ms));
    if (!NodeServesJob(capacity, pending)) continue;
    ++known;
    if (!could_have_type) continue;
    most_gpus = std::max(most_gpus, capacity.gpus_total);
    if (NodeCouldEverHold(capacity, pending)) {
      ++capable;
      parts.Add(parts_.switch_tree.topology() != nullptr
                    ? FabricPartName(*parts_.switch_tree.topology(), name)
                    : "");
    }
  }
  if (absl::Status type = gpu_types.Verdict(); !type.ok()) return type;
  if (known > 0 && spec.gpus_per_node() > most_gpus) {
    return Invalid(absl::StrCat(
        spec.gpus() > 0 ? absl::StrCat("--gpus=", spec.gpus(), " over ",
                                       spec.nodes(), " node(s): ")
                        : "",
        "--gpus-per-node=", spec.gpus_per_node(),
        " is more than any node of partition ", spec.partition(), " has",
        typed ? absl::StrCat(" of GPU type ", pending.gpu_type) : "", " (",
        most_gpus, ")"));
  }
  // A range is refused only when not even its minimum could ever run.
  const uint32_t least_nodes =
      spec.min_nodes() > 0 ? spec.min_nodes() : spec.nodes();
  if (known > 0 &&
      (capable < least_nodes || parts.Largest(parts_.options.unlisted_nodes,
                                              least_nodes) < least_nodes)) {
    return Invalid(absl::StrCat(
        "the job needs ", NodeRangeText(spec), " node(s) with ",
        CpusPerNode(pending), " CPUs",
        spec.gpus_per_node()
            ? absl::StrCat(
                  ", ", spec.gpus_per_node(), " GPUs",
                  typed ? absl::StrCat(" of type ", pending.gpu_type) : "")
            : "",
        spec.mem_per_node_mb()
            ? absl::StrCat(", ", spec.mem_per_node_mb(), " MB")
            : "",
        " each; partition ", spec.partition(), " has ", capable,
        " such node(s)",
        parts.LimitNote(parts_.options.unlisted_nodes, least_nodes)));
  }
  if (known > 0) {
    if (absl::Status restricted = CheckRestrictedJob(job); !restricted.ok()) {
      return restricted;
    }
  }
  return job;
}

absl::Status JobSubmission::CheckRestrictedJob(const v1::JobRecord& job) const {
  const v1::JobSpec& spec = job.spec();
  if (spec.required_nodes().empty() && spec.excluded_nodes().empty() &&
      spec.constraint().empty()) {
    return absl::OkStatus();
  }
  // Checked by CheckNodeRestrictions above; parsed again for the scheduler.
  std::shared_ptr<const NodeConstraint> constraint;
  if (!spec.constraint().empty()) {
    absl::StatusOr<NodeConstraint> parsed =
        NodeConstraint::Parse(spec.constraint());
    if (!parsed.ok()) return parsed.status();
    constraint = std::make_shared<const NodeConstraint>(*std::move(parsed));
  }
  // The scheduler's own test behind PartitionNodeLimit on the nodes the
  // restrictions leave (each choice of a matching-OR, within one part of
  // the fabric), as sbatch refuses "Requested node configuration is not
  // available", rather than a job that waits forever. Only whether the job
  // could ever fit is read: a pass over one job, nothing is started.
  std::vector<const std::string*> names;
  const ScheduleResult result =
      Schedule(parts_.scheduling.NodeSnapshots(names),
               {PendingJobOf(job, constraint)}, {},
               SchedulerOptions{true, true, parts_.clock.NowMs(),
                                parts_.options.unlisted_nodes});
  for (const JobWait& wait : result.waits) {
    if (wait.reason == "PartitionNodeLimit") {
      return Invalid(
          "requested node configuration is not available: the "
          "job " +
          wait.detail);
    }
  }
  return absl::OkStatus();
}

// Clients send 32 hex digits (cli/client/controller_client.cc).
constexpr size_t kMaxSubmissionTokenBytes = 64;

void JobSubmission::Submit(v1::SubmitRequest request, const Caller& caller,
                           std::function<void(absl::StatusOr<JobId>)> done) {
  const std::string& token = request.submission_token();
  if (token.size() > kMaxSubmissionTokenBytes) {
    done(absl::InvalidArgumentError(
        absl::StrCat("the submission token is ", token.size(),
                     " bytes; at most ", kMaxSubmissionTokenBytes)));
    return;
  }
  // A retry of a submission already stored (its answer was lost with the
  // controller that stored it): the same job again, once it is durable.
  if (auto known = submission_tokens_.find({caller.uid, token});
      !token.empty() && known != submission_tokens_.end()) {
    parts_.commits.AfterCommit(
        [done = std::move(done), id = known->second] { done(JobId(id)); });
    return;
  }
  absl::StatusOr<v1::JobRecord> validated =
      Validate(std::move(*request.mutable_spec()));
  if (!validated.ok() || request.validate_only()) {
    done(validated.ok() ? absl::StatusOr<JobId>(JobId()) : validated.status());
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
  const uint64_t first_id = parts_.state.next_job_id;
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
      parts_.commits.staged().environments.emplace_back(first_id,
                                                        std::move(environment));
    }
  }
  const std::string shape =
      absl::StrCat("user ", validated->user(), ", ", validated->spec().nodes(),
                   " node(s), ", JobRankCount(validated->spec()), " task(s)");
  for (size_t i = 0; i < count; ++i) {
    JobRuntime job;
    job.record = i + 1 < count ? *validated : std::move(*validated);
    const uint64_t id = parts_.state.next_job_id++;
    job.record.set_id(id);
    std::string detail = shape;
    if (!task_ids.empty()) {
      job.record.set_array_job_id(first_id);
      job.record.set_array_task_id(task_ids[i]);
      absl::StrAppend(&detail, ", array ", first_id, "_", task_ids[i]);
    }
    if (i == 0 && !token.empty()) {
      job.record.set_submission_token(token);
      submission_tokens_[{caller.uid, token}] = id;
    }
    job.record.set_state(v1::PENDING);
    job.record.set_submit_time_ms(parts_.clock.NowMs());
    job.record.set_eligible_time_ms(job.record.spec().begin_time_ms());
    job.record.set_reason("None");
    if (job.record.spec().hold()) {
      MarkHeld(job.record);
    }
    job.record.set_output_path(
        ResolvePath(job.record.spec().output_pattern(), job.record));
    if (!job.record.spec().error_pattern().empty()) {
      job.record.set_error_path(
          ResolvePath(job.record.spec().error_pattern(), job.record));
    }
    parts_.commits.StageJob(job.record);
    parts_.commits.StageEvent(id, "", "submitted", detail);
    parts_.state.Reindex(
        parts_.state.jobs.emplace(id, std::move(job)).first->second);
    if (parts_.options.metrics)
      parts_.options.metrics->JobAdded(JobStatus::kPending);
    ++parts_.statistics.jobs_submitted;
  }
  parts_.commits.staged().next_job_id = parts_.state.next_job_id;
  const v1::JobRecord& first = parts_.state.jobs.at(first_id).record;
  // Its client keeps it (KeepAllocation) from now on, pending or running.
  if (first.spec().allocation_only()) {
    parts_.allocation_liveness.Heard(first_id, MonotonicMs(parts_.clock));
  }
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
                {"tasks", JobRankCount(first.spec())},
                {"array", first.spec().array()}});
  }
  parts_.commits.AfterCommit([done = std::move(done), first_id] {
    CrashPoint("gantryd.submit.after_commit_before_reply");
    done(JobId(first_id));
  });
  parts_.passes.Request();
}

const PartitionConfig* JobSubmission::FindPartition(
    const std::string& name) const {
  for (const PartitionConfig& partition : parts_.options.partitions) {
    if (partition.name == name) return &partition;
  }
  return nullptr;
}

const PartitionConfig& JobSubmission::DefaultPartition() const {
  for (const PartitionConfig& partition : parts_.options.partitions) {
    if (partition.is_default) return partition;
  }
  return parts_.options.partitions.front();
}

absl::Status JobSubmission::ApplyPartitionLimits(
    const PartitionConfig& partition, v1::JobSpec& spec) const {
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

absl::Status JobSubmission::CheckGpuType(const v1::JobRecord& job) const {
  const PendingJob pending = PendingJobOf(job, nullptr);
  if (pending.gpu_type.empty()) return absl::OkStatus();
  GpuTypeCensus census(pending);
  NodeSnapshot node;
  for (const auto& [name, runtime] : parts_.state.nodes) {
    SetNodeCapacity(runtime.record, node);
    SetGpuTypes(runtime.record, node);
    census.Add(node, GpuTypesMayChange(runtime.record, started_ms_,
                                       parts_.clock.NowMs(),
                                       parts_.options.reconnect_grace_ms));
  }
  return census.Verdict();
}

}  // namespace gantry
