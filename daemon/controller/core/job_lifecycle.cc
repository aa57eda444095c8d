// The job lifecycle (job_lifecycle.h): events go through the job state
// machine (daemon/scheduler/job_state_machine.h), and ApplyEvent carries out
// exactly the effects it returns; failures ask the restart policy first.
// Also a job's start and its checkpoints.
#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "daemon/controller/core/controller_metrics.h"
#include "daemon/controller/core/job_lifecycle.h"
#include "daemon/controller/core/job_state_proto.h"
#include "daemon/launch/kill_reason.h"
#include "daemon/launch/rank_environment.h"
#include "daemon/launch/step_layout.h"

namespace gantry {

JobLifecycle::JobLifecycle(Parts parts, Hooks hooks)
    : parts_(parts),
      hooks_(std::move(hooks)),
      fair_share_(parts.options.priority_weights.half_life_ms) {}

void JobLifecycle::StartJob(JobRuntime& job) {
  v1::JobRecord& record = job.record;
  record.set_attempt(record.attempt() + 1);
  record.set_start_time_ms(parts_.clock.NowMs());
  record.set_master_port(
      ChooseMasterPort(parts_.state.cluster_id, record.id(), record.attempt()));
  record.set_reason("None");
  record.clear_reason_detail();
  record.clear_exits();
  record.set_last_progress_ms(record.start_time_ms());
  job.running_for.Mark(record.start_time_ms(), parts_.clock);
  job.quiet_for.Mark(record.last_progress_ms(), parts_.clock);
  v1::AttemptRecord* attempt = record.add_attempts();
  attempt->set_attempt(record.attempt());
  attempt->set_start_time_ms(record.start_time_ms());
  attempt->set_resumed_from(record.latest_checkpoint().path());
  for (const v1::NodeAllocation& share : record.allocation()) {
    attempt->add_nodes(share.node());
  }
  if (parts_.options.metrics) {
    // A restart waited from the end of the attempt before it.
    const int64_t queued_ms =
        record.attempts_size() > 1
            ? record.attempts(record.attempts_size() - 2).end_time_ms()
            : record.submit_time_ms();
    parts_.options.metrics->ObserveQueueWait(
        static_cast<double>(
            std::max<int64_t>(0, parts_.clock.NowMs() - queued_ms)) /
        1000.0);
  }
  job.exited_ranks.clear();
  job.live_ranks.clear();
  job.started_ranks.clear();
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
  TakeNodeShares(job);
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    feature->OnJobStarted(record);
  }
  std::string nodelist = absl::StrJoin(node_names, ",");
  parts_.commits.StageEvent(
      record.id(), "", "started",
      absl::StrCat(
          "attempt ", record.attempt(), " on ", nodelist,
          record.latest_checkpoint().path().empty()
              ? ""
              : ", resuming from " + record.latest_checkpoint().path()));
  log::Info("job started", {{"job", record.id()},
                            {"attempt", record.attempt()},
                            {"nodes", nodelist}});
}

absl::Status JobLifecycle::ApplyEvent(JobRuntime& job, const JobEvent& event,
                                      const std::string& detail) {
  v1::JobRecord& record = job.record;
  const JobStatus before = FromProto(record.state());
  absl::StatusOr<JobTransition> transition = ApplyJobEvent(before, event);
  if (!transition.ok()) return transition.status();
  if (transition->next == before && transition->effects.empty()) {
    return absl::OkStatus();
  }
  record.set_state(ToProto(transition->next));
  parts_.state.Reindex(job);
  if (parts_.options.metrics)
    parts_.options.metrics->JobMoved(before, transition->next);
  parts_.statistics.JobMoved(before, transition->next);
  // The machine's effects, in its order, and nothing else.
  for (JobEffect effect : transition->effects) {
    switch (effect) {
      case JobEffect::kLaunchRanks:
        parts_.commits.AfterCommit(
            [this, id = record.id(), attempt = record.attempt()] {
              CrashPoint("gantryd.start.after_commit_before_launch");
              SendLaunch(id, attempt);
              CrashPoint("gantryd.start.after_launch_sent");
            });
        break;
      case JobEffect::kKillRanks:
        parts_.commits.AfterCommit([this, id = record.id(), kind = event.kind,
                                    requeue = event.requeue] {
          if (requeue) {
            CrashPoint("gantryd.requeue.after_commit_before_kill");
          } else if (kind == JobEvent::Kind::kCancel) {
            CrashPoint("gantryd.cancel.after_commit_before_kill");
          } else if (kind == JobEvent::Kind::kClientGone) {
            CrashPoint("gantryd.inactive.after_commit_before_kill");
          }
          auto it = parts_.state.jobs.find(id);
          if (it != parts_.state.jobs.end()) {
            SendKill(it->second, 15, /*signal_only=*/false,
                     v1::KillRanks::SCOPE_ALL, KillReasonFor(kind, requeue));
          }
        });
        break;
      case JobEffect::kRecordAttemptEnd:
        if (record.attempts_size() > 0) {
          v1::AttemptRecord* attempt =
              record.mutable_attempts(record.attempts_size() - 1);
          attempt->set_end_time_ms(parts_.clock.NowMs());
          attempt->set_end_reason(
              transition->reason.empty() ? "Completed" : transition->reason);
          attempt->set_end_detail(detail);
        }
        hooks_.end_open_steps(job, "the job's attempt ended: " + detail);
        break;
      case JobEffect::kRequeue:
        if (parts_.options.metrics) {
          parts_.options.metrics->CountRestart(transition->reason);
        }
        record.set_reason("Restarting");
        record.set_reason_detail(detail);
        parts_.commits.StageEvent(
            record.id(), "", "requeued",
            absl::StrCat("attempt ", record.attempt(), " ended (",
                         transition->reason, "): ", detail));
        log::Warn("job requeued", {{"job", record.id()},
                                   {"attempt", record.attempt()},
                                   {"reason", transition->reason},
                                   {"detail", detail}});
        // A requeued allocation waits for its client again.
        if (record.spec().allocation_only()) {
          parts_.allocation_liveness.Heard(record.id(),
                                           MonotonicMs(parts_.clock));
        }
        parts_.passes.Request();
        break;
      case JobEffect::kRecordEnd:
        record.set_end_time_ms(parts_.clock.NowMs());
        record.set_reason(transition->reason.empty() ? "None"
                                                     : transition->reason);
        record.set_reason_detail(detail);
        if (record.spec().allocation_only()) {
          parts_.allocation_liveness.Forget(record.id());
        }
        ++parts_.state.finished_jobs;
        ChargeUsage(record, fair_share_);
        for (const std::unique_ptr<ControllerFeature>& feature :
             parts_.features) {
          feature->OnJobFinished(record);
        }
        parts_.state.finished_order.emplace_back(parts_.clock.NowMs(),
                                                 record.id());
        parts_.passes.Request();  // jobs may depend on this one
        parts_.commits.StageEvent(
            record.id(), "",
            absl::AsciiStrToLower(JobStatusName(transition->next)), detail);
        log::Info("job ended", {{"job", record.id()},
                                {"state", JobStatusName(transition->next)},
                                {"detail", detail}});
        break;
      case JobEffect::kReleaseNodes:
        ReleaseFinished(job);
        break;
    }
  }
  parts_.commits.StageJob(job.record);
  return absl::OkStatus();
}

void JobLifecycle::FailJob(JobRuntime& job, FailureKind kind, int exit_code,
                           int signal, bool all_ranks_exited,
                           const std::string& detail, int64_t fault_time_ms) {
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
                           : parts_.options.default_max_restarts;
  input.restarts_requested =
      record.spec().has_max_restarts() && record.spec().max_restarts() > 0;
  input.exit_code = exit_code;
  input.signal = signal;
  input.repeated_app_failures = record.repeated_app_failures();
  input.previous_exit_code = record.exit_code();
  input.previous_signal = record.exit_signal();
  input.backoff_base_ms = parts_.options.restart_backoff_ms;
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
    v1::AttemptRecord& attempt =
        *record.mutable_attempts(record.attempts_size() - 1);
    attempt.set_node_fault(kind == FailureKind::kNodeFault);
    // Goodput (goodput.h): from the fault to now the failure went unseen.
    if (kind != FailureKind::kCancelled && kind != FailureKind::kTimeLimit) {
      const int64_t now = parts_.clock.NowMs();
      attempt.set_fault_time_ms(
          std::clamp(fault_time_ms > 0 ? fault_time_ms : now,
                     std::min(attempt.start_time_ms(), now), now));
    }
  }
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    feature->OnAttemptFailed(
        record, kind == FailureKind::kNodeFault && decision.restart);
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
    record.set_eligible_time_ms(parts_.clock.NowMs() + decision.backoff_ms);
  }
  std::string full_detail = detail;
  if (!decision.final_detail.empty()) {
    full_detail += "; " + decision.final_detail;
  }
  (void)ApplyEvent(job, event, full_detail);
}

void JobLifecycle::RecordCheckpoint(JobRuntime& job, const std::string& path,
                                    int64_t step, const std::string& source,
                                    double write_seconds) {
  v1::JobRecord& record = job.record;
  const int64_t now = parts_.clock.NowMs();
  record.set_last_progress_ms(now);
  job.quiet_for.Mark(now, parts_.clock);
  if (step >= 0) record.set_progress_step(step);
  // The job's own reports are progress; a marker file only when it
  // changed (below): the one an attempt resumed from is read again.
  if (source == "report") NoteProgress(job, /*checkpoint=*/false);
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
  info.set_write_seconds(write_seconds);
  if (write_seconds > 0) {
    // Smoothed, so one slow write (a busy file system) does not halve or
    // double the next attempt's interval on its own.
    const double cost = record.checkpoint_cost_seconds();
    record.set_checkpoint_cost_seconds(
        cost > 0 ? 0.7 * cost + 0.3 * write_seconds : write_seconds);
  }
  NoteProgress(job, /*checkpoint=*/true);
  parts_.commits.StageJob(job.record);
  parts_.commits.StageEvent(
      record.id(), "", "checkpoint",
      absl::StrCat(path, step >= 0 ? absl::StrCat(" (step ", step, ")") : "",
                   " from ", source));
  log::Info("checkpoint recorded", {{"job", record.id()},
                                    {"path", path},
                                    {"step", step},
                                    {"source", source}});
  for (const std::unique_ptr<ControllerFeature>& feature : parts_.features) {
    feature->OnCheckpoint(record);
  }
}

}  // namespace gantry
