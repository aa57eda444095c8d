#include "daemon/controller/features/preflight/preflight_feature.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/log.h"
#include "daemon/controller/core/controller_metrics.h"
#include "daemon/controller/core/preflight_record.h"
#include "daemon/launch/rank_environment.h"

namespace gantry {
namespace {

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

PreflightFeature::PreflightFeature(FeatureContext& context,
                                   PreflightOptions options)
    : context_(context), options_(std::move(options)) {}

void PreflightFeature::OnNodeRegistered(const std::string& node,
                                        const v1::Register& registration) {
  rounds_.NotePort(node, registration.preflight_port());
}

void PreflightFeature::OnJobStarted(const v1::JobRecord& job) {
  if (job.attempts_size() == 0 ||
      !PreflightWanted(options_, job.spec(), job.allocation_size())) {
    return;
  }
  const int64_t now = context_.clock().NowMs();
  const uint64_t id = job.id();
  context_.UpdateCurrentAttempt(id, [now](v1::AttemptRecord& attempt) {
    attempt.set_preflight_start_ms(now);
  });
  context_.SetJobReason(id, kPreflightReason,
                        "pre-flight gang check before the ranks start");
}

bool PreflightFeature::HoldLaunch(const v1::JobRecord& job, bool whole) {
  if (!PreflightInProgress(job)) return false;
  // The check goes first; its verdict sends the launch, or not.
  if (whole && rounds_.Find(job.id(), job.attempt()) == nullptr) Send(job);
  return true;
}

void PreflightFeature::Send(const v1::JobRecord& job) {
  PreflightRounds::Round round;
  round.attempt = job.attempt();
  round.started_ms = MonotonicMs(context_.clock());
  round.deadline_ms = round.started_ms + options_.timeout_ms + kAnswerGraceMs;
  v1::PreflightCheck check;
  check.set_job_id(job.id());
  check.set_attempt(job.attempt());
  check.set_token(rounds_.NewToken());
  check.set_transfer_bytes(options_.transfer_bytes);
  check.set_timeout_ms(static_cast<uint32_t>(options_.timeout_ms));
  check.set_site_command(options_.site_command);
  check.set_gloo(options_.gloo);
  check.set_gloo_port(
      ChooseMasterPort(~context_.cluster_id(), job.id(), job.attempt()));
  for (const v1::NodeAllocation& share : job.allocation()) {
    round.nodes.push_back(share.node());
    v1::PreflightPeer& peer = *check.add_peers();
    peer.set_node(share.node());
    if (const v1::NodeRecord* node = context_.FindNode(share.node())) {
      peer.set_address(node->address());
    }
    peer.set_port(rounds_.PortOf(share.node()));
  }
  rounds_.Begin(job.id(), round);
  log::Info("pre-flight started", {{"job", job.id()},
                                   {"attempt", job.attempt()},
                                   {"nodes", job.allocation_size()}});
  for (int i = 0; i < job.allocation_size(); ++i) {
    check.set_index(static_cast<uint32_t>(i));
    v1::ControllerMessage message;
    *message.mutable_preflight() = check;
    // A node without a stream cannot answer: the deadline counts it.
    context_.SendToNode(job.allocation(i).node(), message);
  }
}

void PreflightFeature::OnAgentMessage(const std::string& node,
                                      const v1::AgentMessage& message) {
  if (!message.has_preflight_result()) return;
  const v1::PreflightResult& result = message.preflight_result();
  PreflightRounds::Round* round =
      rounds_.Find(result.job_id(), result.attempt());
  // A late answer of a finished round, or of an earlier attempt.
  if (round == nullptr) return;
  if (!rounds_.Answer(*round, node, result)) return;
  if (const v1::JobRecord* job = context_.FindJob(result.job_id())) {
    Finish(*job);
  }
}

void PreflightFeature::OnTick(uint64_t /*tick*/) {
  // Rounds past their deadline get their verdict without the missing.
  for (uint64_t job_id : rounds_.Overdue(MonotonicMs(context_.clock()))) {
    const v1::JobRecord* job = context_.FindJob(job_id);
    if (job == nullptr) {
      rounds_.End(job_id);
      continue;
    }
    Finish(*job);
  }
}

bool PreflightFeature::HoldsRanks(const v1::JobRecord& job) {
  if (!PreflightInProgress(job)) return false;
  if (rounds_.Find(job.id(), job.attempt()) != nullptr) return true;
  // Not sent yet: the launch (after the start's commit) sends it.
  if (job.attempts(job.attempts_size() - 1).preflight_start_ms() >=
      context_.started_ms()) {
    return true;
  }
  // A check this controller lost when it restarted: a new one, once every
  // node of the allocation is back (a node that is not is found down, and
  // the job restarts without it, uncharged: OnNodeLost).
  for (const v1::NodeAllocation& share : job.allocation()) {
    if (!context_.NodeConnected(share.node())) return true;
  }
  Send(job);
  return true;
}

bool PreflightFeature::OnNodeLost(const v1::JobRecord& job,
                                  const std::string& node) {
  if (job.state() != v1::RUNNING || !PreflightInProgress(job)) return false;
  PreflightRounds::Round* round = rounds_.Find(job.id(), job.attempt());
  if (round == nullptr) {
    PreflightRounds::Round lost;
    lost.attempt = job.attempt();
    lost.started_ms = MonotonicMs(context_.clock());
    for (const v1::NodeAllocation& share : job.allocation()) {
      lost.nodes.push_back(share.node());
    }
    round = &rounds_.Begin(job.id(), lost);
  }
  // The node's answer will never come: judge now, without it.
  round->answers.erase(node);
  Finish(job);
  return true;
}

void PreflightFeature::Finish(const v1::JobRecord& job) {
  PreflightRounds::Round* round = rounds_.Find(job.id(), job.attempt());
  if (round == nullptr || job.attempts_size() == 0 ||
      job.state() != v1::RUNNING || !PreflightInProgress(job)) {
    rounds_.End(job.id());
    return;
  }
  const int64_t now = context_.clock().NowMs();
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
  const PreflightVerdict verdict =
      JudgePreflight(reports, options_.slow_factor, options_.timeout_ms);
  const size_t gang = round->nodes.size();
  rounds_.End(job.id());
  const uint64_t id = job.id();
  const int64_t began =
      job.attempts(job.attempts_size() - 1).preflight_start_ms();
  const std::string summary =
      Summary(verdict, gang, now - began,
              verdict.median_gloo_mbps > 0 ? "" : gloo_problem);
  context_.UpdateCurrentAttempt(id, [&](v1::AttemptRecord& attempt) {
    attempt.set_preflight_end_ms(now);
    attempt.set_preflight_summary(summary);
    for (const PreflightRejection& rejection : verdict.rejected) {
      v1::PreflightFinding& finding = *attempt.add_preflight_findings();
      finding.set_node(rejection.node);
      finding.set_reason(rejection.reason);
    }
  });
  if (ControllerMetrics* metrics = context_.metrics()) {
    metrics->ObservePreflight(static_cast<double>(now - began) / 1000.0,
                              verdict.rejected.size());
  }
  context_.RecordEvent(id, "", "preflight", summary);
  for (const PreflightRejection& slow : verdict.degraded) {
    log::Warn("pre-flight: node degraded (kept; measured again next time)",
              {{"job", id}, {"node", slow.node}, {"reason", slow.reason}});
  }
  log::Info("pre-flight done",
            {{"job", id}, {"attempt", job.attempt()}, {"summary", summary}});
  if (verdict.rejected.empty()) {
    context_.ReleaseLaunch(id);
    return;
  }
  Reject(job, verdict.rejected, gang);
}

void PreflightFeature::Reject(const v1::JobRecord& job,
                              const std::vector<PreflightRejection>& rejected,
                              size_t gang) {
  const uint64_t id = job.id();
  std::vector<std::string> parts;
  parts.reserve(rejected.size());
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
    context_.RequeueUnstarted(
        id, detail, /*hold=*/true, "PreflightFailed",
        absl::StrCat(detail, "; starts again after gantry release ", id,
                     " (scontrol release)"));
  } else {
    for (const PreflightRejection& r : rejected) {
      context_.DrainNode(r.node, r.reason);
    }
    context_.RequeueUnstarted(id, detail, /*hold=*/false, kPreflightReason,
                              detail);
  }
  log::Warn("pre-flight rejected nodes", {{"job", id}, {"detail", detail}});
}

FeatureFactory PreflightFeatureFactory(const PreflightOptions& options) {
  return [options](FeatureContext& context) {
    return std::make_unique<PreflightFeature>(context, options);
  };
}

}  // namespace gantry
