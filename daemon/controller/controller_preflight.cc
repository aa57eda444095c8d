// Controller: the pre-flight gang check (docs/user-guide.md "Pre-flight"). A
// job attempt that wants it starts as any other (RUNNING, its nodes taken), but
// its launch waits: every node of the allocation gets a PreflightCheck, and
// once all answered (or the deadline passed) the verdict
// (daemon/scheduler/preflight_verdict.h) decides. A pass sends the launch. A
// failure drains the nodes to blame, with the reason, and ends the attempt
// uncharged: the job goes back to PENDING (reason and attempt end "Preflight"),
// is placed again on other nodes (hot spares first, as any restart) and is
// checked again; if no node is free it waits. No rank ran, so the job has seen
// no failure: the attempt costs none of its --max-restarts, and
// GANTRY_RESTART_COUNT does not count it.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/controller_metrics.h"
#include "daemon/launch/rank_environment.h"
#include "daemon/scheduler/preflight_verdict.h"

namespace gantry {
namespace {

// Time the agents' answers get on top of the check's own timeout.
constexpr int64_t kAnswerGraceMs = 2000;

v1::AttemptRecord* LastAttempt(v1::JobRecord& record) {
  if (record.attempts_size() == 0) return nullptr;
  return record.mutable_attempts(record.attempts_size() - 1);
}

std::string Seconds(int64_t ms) {
  return absl::StrFormat("%.1f s", static_cast<double>(ms) / 1000.0);
}

PreflightNodeReport ReportOf(const std::string& node,
                             const v1::PreflightResult* result) {
  PreflightNodeReport report;
  report.node = node;
  if (result == nullptr) return report;
  report.answered = true;
  report.passed = result->passed();
  report.problem = result->problem();
  report.send_problem = result->send_problem();
  report.receive_problem = result->receive_problem();
  report.send_not_taken = result->send_not_taken();
  report.send_mbps = result->send_mbps();
  report.receive_mbps = result->receive_mbps();
  report.round_trip_us = result->round_trip_us();
  report.gloo_mbps = result->gloo_mbps();
  report.site_mbps = result->site_mbps();
  return report;
}

std::string Summary(const PreflightVerdict& verdict, size_t nodes,
                    int64_t took_ms, const std::string& gloo_problem) {
  std::string text =
      absl::StrCat(verdict.rejected.empty() ? "passed" : "failed", " in ",
                   Seconds(took_ms), " on ", nodes, " nodes");
  if (verdict.median_link_mbps > 0) {
    absl::StrAppend(&text, absl::StrFormat("; TCP ring median %.0f MB/s",
                                           verdict.median_link_mbps));
  }
  if (verdict.median_round_trip_us > 0) {
    absl::StrAppend(&text, absl::StrFormat(", round trip %.0f us",
                                           verdict.median_round_trip_us));
  }
  if (verdict.median_gloo_mbps > 0) {
    absl::StrAppend(&text, absl::StrFormat("; gloo all-reduce %.0f MB/s",
                                           verdict.median_gloo_mbps));
  } else if (!gloo_problem.empty()) {
    absl::StrAppend(&text,
                    "; gloo all-reduce failed everywhere (no node "
                    "blamed): ",
                    gloo_problem);
  }
  if (verdict.median_site_mbps > 0) {
    absl::StrAppend(&text,
                    absl::StrFormat("; site check bus bandwidth %.0f MB/s",
                                    verdict.median_site_mbps));
  }
  if (!verdict.rejected.empty()) {
    std::vector<std::string> names;
    for (const PreflightRejection& r : verdict.rejected)
      names.push_back(r.node);
    absl::StrAppend(&text, "; swapped out ", absl::StrJoin(names, ","));
  }
  // Slow only: kept in the gang (bandwidth alone drains nobody), said here
  // so the owner and the admin see it; the next pre-flight measures again.
  for (const PreflightRejection& slow : verdict.degraded) {
    absl::StrAppend(&text, "; degraded, kept: ", slow.node, " (", slow.reason,
                    ")");
  }
  return text;
}

}  // namespace

void Controller::MarkPreflight(JobRuntime& job) {
  v1::JobRecord& record = job.record;
  if (!PreflightWanted(options_.preflight, record.spec(),
                       record.allocation_size())) {
    return;
  }
  v1::AttemptRecord* attempt = LastAttempt(record);
  if (attempt == nullptr) return;
  attempt->set_preflight_start_ms(clock_.NowMs());
  record.set_reason(kPreflightReason);
  record.set_reason_detail("pre-flight gang check before the ranks start");
  StageJob(job);
}

void Controller::SendPreflight(JobRuntime& job) {
  v1::JobRecord& record = job.record;
  PreflightRounds::Round round;
  round.attempt = record.attempt();
  round.started_ms = MonotonicMs(clock_);
  round.deadline_ms =
      round.started_ms + options_.preflight.timeout_ms + kAnswerGraceMs;
  v1::PreflightCheck check;
  check.set_job_id(record.id());
  check.set_attempt(record.attempt());
  check.set_token(preflights_.NewToken());
  check.set_transfer_bytes(options_.preflight.transfer_bytes);
  check.set_timeout_ms(static_cast<uint32_t>(options_.preflight.timeout_ms));
  check.set_site_command(options_.preflight.site_command);
  check.set_gloo(options_.preflight.gloo);
  check.set_gloo_port(
      ChooseMasterPort(~cluster_id_, record.id(), record.attempt()));
  for (const v1::NodeAllocation& share : record.allocation()) {
    round.nodes.push_back(share.node());
    v1::PreflightPeer& peer = *check.add_peers();
    peer.set_node(share.node());
    peer.set_address(nodes_.at(share.node()).record.address());
    peer.set_port(preflights_.PortOf(share.node()));
  }
  preflights_.Begin(record.id(), round);
  log::Info("pre-flight started", {{"job", record.id()},
                                   {"attempt", record.attempt()},
                                   {"nodes", record.allocation_size()}});
  for (int i = 0; i < record.allocation_size(); ++i) {
    NodeRuntime& node = nodes_.at(record.allocation(i).node());
    // A node without a stream cannot answer: the deadline counts it.
    if (!node.link) continue;
    check.set_index(static_cast<uint32_t>(i));
    v1::ControllerMessage message;
    *message.mutable_preflight() = check;
    node.link->Send(message);
  }
}

void Controller::OnPreflightResult(const std::string& node,
                                   const v1::PreflightResult& result) {
  PreflightRounds::Round* round =
      preflights_.Find(result.job_id(), result.attempt());
  // A late answer of a finished round, or of an earlier attempt.
  if (round == nullptr) return;
  if (!preflights_.Answer(*round, node, result)) return;
  auto it = jobs_.find(result.job_id());
  if (it != jobs_.end()) FinishPreflight(it->second);
}

void Controller::CheckPreflights(int64_t monotonic_ms) {
  for (uint64_t job_id : preflights_.Overdue(monotonic_ms)) {
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) {
      preflights_.End(job_id);
      continue;
    }
    FinishPreflight(it->second);
  }
}

bool Controller::HoldForPreflight(JobRuntime& job) {
  v1::JobRecord& record = job.record;
  if (!PreflightInProgress(record)) return false;
  if (preflights_.Find(record.id(), record.attempt()) != nullptr) return true;
  // Not sent yet: the launch (after the start's commit) sends it.
  if (record.attempts(record.attempts_size() - 1).preflight_start_ms() >=
      started_ms_) {
    return true;
  }
  // A check this controller lost when it restarted: a new one, once every
  // node of the allocation is back (a node that is not is found down, and
  // the job restarts without it, uncharged, as below).
  for (const v1::NodeAllocation& share : record.allocation()) {
    if (!nodes_.at(share.node()).link) return true;
  }
  SendPreflight(job);
  return true;
}

bool Controller::PreflightTakesNodeLoss(JobRuntime& job,
                                        const std::string& node) {
  if (job.record.state() != v1::RUNNING || !PreflightInProgress(job.record)) {
    return false;
  }
  PreflightRounds::Round* round =
      preflights_.Find(job.record.id(), job.record.attempt());
  if (round == nullptr) {
    PreflightRounds::Round lost;
    lost.attempt = job.record.attempt();
    lost.started_ms = MonotonicMs(clock_);
    for (const v1::NodeAllocation& share : job.record.allocation()) {
      lost.nodes.push_back(share.node());
    }
    round = &preflights_.Begin(job.record.id(), lost);
  }
  // The node's answer will never come: judge now, without it.
  round->answers.erase(node);
  FinishPreflight(job);
  return true;
}

void Controller::FinishPreflight(JobRuntime& job) {
  v1::JobRecord& record = job.record;
  PreflightRounds::Round* round =
      preflights_.Find(record.id(), record.attempt());
  v1::AttemptRecord* attempt = LastAttempt(record);
  if (round == nullptr || attempt == nullptr || record.state() != v1::RUNNING ||
      !PreflightInProgress(record)) {
    preflights_.End(record.id());
    return;
  }
  const int64_t now = clock_.NowMs();
  std::vector<PreflightNodeReport> reports;
  std::string gloo_problem;
  for (const std::string& node : round->nodes) {
    auto answer = round->answers.find(node);
    const bool answered = answer != round->answers.end();
    reports.push_back(ReportOf(node, answered ? &answer->second : nullptr));
    if (answered && gloo_problem.empty()) {
      gloo_problem = answer->second.gloo_problem();
    }
  }
  const PreflightVerdict verdict = JudgePreflight(
      reports, options_.preflight.slow_factor, options_.preflight.timeout_ms);
  const size_t gang = round->nodes.size();
  preflights_.End(record.id());
  attempt->set_preflight_end_ms(now);
  attempt->set_preflight_summary(
      Summary(verdict, gang, now - attempt->preflight_start_ms(),
              verdict.median_gloo_mbps > 0 ? "" : gloo_problem));
  for (const PreflightRejection& rejection : verdict.rejected) {
    v1::PreflightFinding& finding = *attempt->add_preflight_findings();
    finding.set_node(rejection.node);
    finding.set_reason(rejection.reason);
  }
  if (options_.metrics) {
    options_.metrics->ObservePreflight(
        static_cast<double>(now - attempt->preflight_start_ms()) / 1000.0,
        verdict.rejected.size());
  }
  StageEvent(record.id(), "", "preflight", attempt->preflight_summary());
  for (const PreflightRejection& slow : verdict.degraded) {
    log::Warn(
        "pre-flight: node degraded (kept; measured again next time)",
        {{"job", record.id()}, {"node", slow.node}, {"reason", slow.reason}});
  }
  log::Info("pre-flight done", {{"job", record.id()},
                                {"attempt", record.attempt()},
                                {"summary", attempt->preflight_summary()}});
  if (verdict.rejected.empty()) {
    record.set_reason("None");
    record.clear_reason_detail();
    // The hang timeout counts from the ranks' start, not the check's.
    record.set_last_progress_ms(now);
    job.quiet_for.Mark(now, clock_);
    StageJob(job);
    AfterCommit([this, id = record.id(), attempt = record.attempt()] {
      SendLaunch(id, attempt);
    });
    return;
  }
  RejectPreflight(job, verdict.rejected, gang);
}

void Controller::RejectPreflight(
    JobRuntime& job, const std::vector<PreflightRejection>& rejected,
    size_t gang) {
  v1::JobRecord& record = job.record;
  std::vector<std::string> parts;
  for (const PreflightRejection& r : rejected) {
    parts.push_back(absl::StrCat(r.node, " (", r.reason, ")"));
  }
  std::string detail =
      absl::StrCat("pre-flight swapped out ", absl::StrJoin(parts, ", "));
  // Most of the gang failing at once is more likely the check itself (a
  // site command that cannot work here) or the network as a whole than
  // that many bad nodes: drain nobody, and hold the job for a person.
  const bool gang_wide = gang >= 2 && rejected.size() * 2 > gang;
  if (gang_wide) {
    detail = absl::StrCat(
        "pre-flight failed on ", rejected.size(), " of ", gang,
        " nodes, too many to blame them: ", absl::StrJoin(parts, ", "));
  } else {
    for (const PreflightRejection& r : rejected) {
      NodeRuntime& node = nodes_.at(r.node);
      if (!node.record.drained()) DrainNode(node, r.reason);
    }
  }
  // No rank started: nothing to charge and nothing to wait for.
  record.set_uncharged_attempts(record.uncharged_attempts() + 1);
  record.set_eligible_time_ms(clock_.NowMs());
  job.live_ranks.clear();
  JobEvent event{JobEvent::Kind::kPreflightFailed};
  event.requeue = true;
  (void)ApplyEvent(job, event, detail);
  if (gang_wide) {
    record.set_held(true);
    record.set_reason("PreflightFailed");
    record.set_reason_detail(
        absl::StrCat(detail, "; starts again after gantry release ",
                     record.id(), " (scontrol release)"));
  } else {
    record.set_reason(kPreflightReason);
    record.set_reason_detail(detail);
  }
  StageJob(job);
  log::Warn("pre-flight rejected nodes",
            {{"job", record.id()}, {"detail", detail}});
}

}  // namespace gantry
