// Staging ahead for DatasetsFeature: each pass's reservations become the
// planner's targets (stage_ahead.h), their prefetches go out pinned for the
// waiting job on the node, and `gantry job` shows them while it waits.
#include <algorithm>
#include <map>
#include <utility>

#include "common/log.h"
#include "daemon/controller/features/datasets/datasets_feature.h"

namespace gantry {

void DatasetsFeature::OnReservations(
    const std::vector<Reservation>& reservations,
    const std::vector<const std::string*>& node_names) {
  if (!stage_ahead_.enabled()) return;
  std::vector<StageAheadTarget> targets;
  expected_start_ms_.clear();
  for (const Reservation& reservation : reservations) {
    const v1::JobRecord* record = context_.FindJob(reservation.job_id.value());
    // Agents refuse to prefetch as root (a copy as root could read what
    // no user may): a root job's datasets are staged at its launch.
    if (record == nullptr || record->state() != v1::PENDING ||
        record->spec().datasets().empty() || record->uid() == 0) {
      continue;
    }
    StageAheadTarget target;
    target.job_id = record->id();
    target.start_ms = reservation.start_ms;
    expected_start_ms_[target.job_id] = reservation.start_ms;
    for (NodeId id : reservation.nodes) {
      const std::string& name = *node_names[id.index()];
      const v1::NodeRecord* node = context_.FindNode(name);
      if (node == nullptr || !context_.NodeConnected(name)) continue;
      // The reservation keeps to the job's partition; checked again so
      // that nothing of a user is ever copied where they may not run.
      const auto& partitions = node->partitions();
      if (std::find(partitions.begin(), partitions.end(),
                    record->spec().partition()) == partitions.end()) {
        continue;
      }
      target.nodes.push_back(name);
    }
    for (const v1::DatasetRef& dataset : record->spec().datasets()) {
      target.datasets.push_back(dataset.name());
    }
    targets.push_back(std::move(target));
  }
  stage_ahead_.SetTargets(std::move(targets));
  SendStagedAhead();
}

void DatasetsFeature::SendStagedAhead() {
  if (!stage_ahead_.enabled()) return;
  const int64_t now = context_.clock().NowMs();
  for (const StageAheadSend& send : stage_ahead_.Plan(requests_, now)) {
    const v1::JobRecord* record = context_.FindJob(send.job_id);
    if (record == nullptr || record->state() != v1::PENDING) {
      stage_ahead_.Forget(send.job_id);
      continue;
    }
    const auto& datasets = record->spec().datasets();
    auto dataset = std::find_if(
        datasets.begin(), datasets.end(),
        [&send](const v1::DatasetRef& d) { return d.name() == send.dataset; });
    if (dataset == datasets.end()) continue;
    const DatasetOwner owner{record->uid(), record->gid(), record->user()};
    absl::StatusOr<uint64_t> request =
        SendPrefetch(send.node, owner, *dataset, send.job_id, send.hold_ms);
    // No agent there now (UNAVAILABLE): a later pass proposes it again.
    if (!request.ok()) continue;
    stage_ahead_.Sent(send, *request, now);
    auto start = expected_start_ms_.find(send.job_id);
    log::Info("dataset staged ahead",
              {{"job", send.job_id},
               {"node", send.node},
               {"dataset", send.dataset},
               {"request", *request},
               {"start_in_ms",
                start == expected_start_ms_.end() ? 0 : start->second - now},
               {"hold_ms", send.hold_ms}});
  }
}

void DatasetsFeature::OnTick(uint64_t /*tick*/) {
  // A reservation entering the window or a back-off ending: a pass then
  // gives the planner the reservations as they are by that time. (On the
  // tick rather than a timer of its own: the controller's clock decides.)
  const int64_t due = stage_ahead_.next_plan_ms();
  if (due != 0 && context_.clock().NowMs() >= due) {
    context_.RequestSchedule();
  }
}

void DatasetsFeature::FillJob(const v1::JobRecord& job,
                              v1::GetJobResponse& reply) const {
  if (job.state() != v1::PENDING) return;
  // A requeued job shows only what was sent since it waits again.
  const int64_t since =
      job.attempts_size() > 0
          ? job.attempts(job.attempts_size() - 1).end_time_ms()
          : 0;
  // The latest request per node and dataset (ForJob lists oldest first).
  std::map<std::pair<std::string, std::string>, const DatasetRequest*> latest;
  for (const DatasetRequest* request : requests_.ForJob(job.id())) {
    if (request->kind != DatasetRequest::Kind::kPrefetch ||
        request->sent_ms < since) {
      continue;
    }
    latest[{request->node, request->dataset}] = request;
  }
  for (const auto& [key, request] : latest) {
    v1::DatasetStagedAhead& entry = *reply.mutable_job()->add_staged_ahead();
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
