// Controller: staging a waiting job's datasets ahead onto the nodes its
// backfill reservation expects it to start on, so that its launch finds
// them cached. StageAheadPlanner (stage_ahead.h) decides what to send;
// this file gives it each pass's reservations, sends its prefetches
// (SendDatasetPrefetch, pinned for the job on the node) and shows them in
// `gantry job` while the job waits.
//
// What was sent is in memory only: after a gantryd restart the next pass
// sends again, and an agent that holds the copy answers with a cheap hit.
//
// Runs on the controller's loop, like every Controller method.
#include <algorithm>
#include <map>
#include <utility>

#include "common/log.h"
#include "daemon/controller/controller.h"

namespace gantry {

void Controller::StageDatasetsAhead(
    const std::vector<Reservation>& reservations,
    const std::vector<const std::string*>& names) {
  if (!stage_ahead_.enabled()) return;
  std::vector<StageAheadTarget> targets;
  for (const Reservation& reservation : reservations) {
    auto job = state_.jobs.find(reservation.job_id.value());
    if (job == state_.jobs.end()) continue;
    const v1::JobRecord& record = job->second.record;
    // Agents refuse to prefetch as root (a copy as root could read what
    // no user may): a root job's datasets are staged at its launch.
    if (record.state() != v1::PENDING || record.spec().datasets().empty() ||
        record.uid() == 0) {
      continue;
    }
    StageAheadTarget target;
    target.job_id = record.id();
    target.start_ms = reservation.start_ms;
    for (NodeId id : reservation.nodes) {
      auto node = state_.nodes.find(*names[id.index()]);
      if (node == state_.nodes.end() || !node->second.link) continue;
      // The reservation keeps to the job's partition; checked again so
      // that nothing of a user is ever copied where they may not run.
      const auto& partitions = node->second.record.partitions();
      if (std::find(partitions.begin(), partitions.end(),
                    record.spec().partition()) == partitions.end()) {
        continue;
      }
      target.nodes.push_back(node->first);
    }
    for (const v1::DatasetRef& dataset : record.spec().datasets()) {
      target.datasets.push_back(dataset.name());
    }
    targets.push_back(std::move(target));
  }
  stage_ahead_.SetTargets(std::move(targets));
  SendStagedAhead();
}

void Controller::SendStagedAhead() {
  if (!stage_ahead_.enabled()) return;
  const int64_t now = clock_.NowMs();
  for (const StageAheadSend& send : stage_ahead_.Plan(dataset_requests_, now)) {
    auto job = state_.jobs.find(send.job_id);
    if (job == state_.jobs.end() || job->second.record.state() != v1::PENDING) {
      stage_ahead_.Forget(send.job_id);
      continue;
    }
    const v1::JobRecord& record = job->second.record;
    const auto& datasets = record.spec().datasets();
    auto dataset = std::find_if(
        datasets.begin(), datasets.end(),
        [&send](const v1::DatasetRef& d) { return d.name() == send.dataset; });
    if (dataset == datasets.end()) continue;
    const DatasetOwner owner{record.uid(), record.gid(), record.user()};
    absl::StatusOr<uint64_t> request = SendDatasetPrefetch(
        send.node, owner, *dataset, send.job_id, send.hold_ms);
    // No agent there now (UNAVAILABLE): a later pass proposes it again.
    if (!request.ok()) continue;
    stage_ahead_.Sent(send, *request, now);
    log::Info("dataset staged ahead",
              {{"job", send.job_id},
               {"node", send.node},
               {"dataset", send.dataset},
               {"request", *request},
               {"start_in_ms", job->second.expected_start_ms - now},
               {"hold_ms", send.hold_ms}});
  }
  // A reservation entering the window or a back-off ending: the tick
  // (CheckDeadlines) runs a pass then.
  const int64_t wake = stage_ahead_.next_plan_ms();
  if (wake != 0 && (next_eligible_ms_ == 0 || wake < next_eligible_ms_)) {
    next_eligible_ms_ = wake;
  }
}

void Controller::ShowStagedAhead(v1::JobRecord& record) const {
  if (record.state() != v1::PENDING) return;
  // A requeued job shows only what was sent since it waits again.
  const int64_t since =
      record.attempts_size() > 0
          ? record.attempts(record.attempts_size() - 1).end_time_ms()
          : 0;
  // The latest request per node and dataset (ForJob lists oldest first).
  std::map<std::pair<std::string, std::string>, const DatasetRequest*> latest;
  for (const DatasetRequest* request : dataset_requests_.ForJob(record.id())) {
    if (request->kind != DatasetRequest::Kind::kPrefetch ||
        request->sent_ms < since) {
      continue;
    }
    latest[{request->node, request->dataset}] = request;
  }
  for (const auto& [key, request] : latest) {
    v1::DatasetStagedAhead& entry = *record.add_staged_ahead();
    entry.set_node(request->node);
    entry.set_dataset(request->dataset);
    entry.set_sent_ms(request->sent_ms);
    if (!request->done) {
      entry.set_state(v1::DatasetStagedAhead::COPYING);
      continue;
    }
    entry.set_state(request->result.ok() ? v1::DatasetStagedAhead::DONE
                                         : v1::DatasetStagedAhead::FAILED);
    entry.set_message(request->result.message());
    entry.set_bytes_total(request->result.bytes_total());
    entry.set_bytes_copied(request->result.bytes_copied());
  }
}

}  // namespace gantry
