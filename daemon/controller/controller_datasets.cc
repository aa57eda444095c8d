// Dataset staging as the nodes report it (issue: dataset cache): each
// node's progress per dataset goes into the job's record, for `gantry
// job`, and the job's reason says Staging until every node is done.
//
// Runs on the controller's loop, like every Controller method.
#include <string>

#include "common/log.h"
#include "daemon/controller/controller.h"

namespace gantry {

namespace {

// The reason a running job shows while its nodes stage its datasets.
constexpr char kStagingReason[] = "Staging";

}  // namespace

void Controller::ShowStaging(v1::JobRecord& record, bool staging) {
  // A running job's reason is otherwise "None".
  if (staging) {
    if (record.reason().empty() || record.reason() == "None") {
      record.set_reason(kStagingReason);
    }
  } else if (record.reason() == kStagingReason) {
    record.set_reason("None");
  }
}

void Controller::OnDatasetProgress(const std::string& node_name,
                                   const v1::DatasetProgress& progress) {
  auto it = state_.jobs.find(progress.job_id());
  if (it == state_.jobs.end()) return;
  v1::JobRecord& record = it->second.record;
  if (record.attempt() != progress.attempt() || record.state() != v1::RUNNING) {
    return;  // a stale report of an earlier attempt
  }
  bool on_node = false;
  for (const v1::NodeAllocation& share : record.allocation()) {
    on_node = on_node || share.node() == node_name;
  }
  if (!on_node) return;  // only the job's own nodes speak for it
  v1::DatasetStaging* entry = nullptr;
  for (v1::DatasetStaging& staging : *record.mutable_dataset_staging()) {
    if (staging.node() == node_name &&
        staging.dataset() == progress.dataset()) {
      entry = &staging;
    }
  }
  if (entry == nullptr) {
    entry = record.add_dataset_staging();
    entry->set_node(node_name);
    entry->set_dataset(progress.dataset());
  }
  entry->set_bytes_done(progress.bytes_done());
  entry->set_bytes_total(progress.bytes_total());
  entry->set_done(progress.done());
  entry->set_hit(progress.hit());
  entry->set_bytes_copied(progress.bytes_copied());
  // Every node must report every dataset before staging is over.
  const int expected = record.allocation_size() * record.spec().datasets_size();
  int done = 0;
  for (const v1::DatasetStaging& staging : record.dataset_staging()) {
    if (staging.done()) ++done;
  }
  ShowStaging(record, done < expected);
  if (progress.done()) {
    log::Info("dataset staged", {{"job", progress.job_id()},
                                 {"node", node_name},
                                 {"dataset", progress.dataset()},
                                 {"hit", progress.hit() ? "yes" : "no"},
                                 {"bytes", progress.bytes_total()},
                                 {"copied", progress.bytes_copied()}});
  }
}

absl::StatusOr<Controller::OpenedDatasetRequest> Controller::OpenDatasetRequest(
    DatasetRequest request) {
  auto it = state_.nodes.find(request.node);
  if (it == state_.nodes.end()) {
    return absl::NotFoundError("no node named " + request.node);
  }
  if (!it->second.link) {
    return absl::UnavailableError("node " + request.node +
                                  " has no connected agent");
  }
  request.sent_ms = clock_.NowMs();
  return OpenedDatasetRequest{dataset_requests_.Add(std::move(request)),
                              it->second.link.get()};
}

absl::StatusOr<uint64_t> Controller::SendDatasetPrefetch(
    const std::string& node, const DatasetOwner& owner,
    const v1::DatasetRef& dataset, uint64_t job_id, int64_t hold_ms) {
  DatasetRequest request;
  request.kind = DatasetRequest::Kind::kPrefetch;
  request.node = node;
  request.owner_uid = owner.uid;
  request.dataset = dataset.name();
  request.path = dataset.path();
  request.job_id = job_id;
  absl::StatusOr<OpenedDatasetRequest> opened =
      OpenDatasetRequest(std::move(request));
  if (!opened.ok()) return opened.status();
  v1::ControllerMessage message;
  v1::DatasetPrefetch& prefetch = *message.mutable_dataset_prefetch();
  prefetch.set_request_id(opened->id);
  prefetch.set_uid(owner.uid);
  prefetch.set_gid(owner.gid);
  prefetch.set_user(owner.user);
  *prefetch.mutable_dataset() = dataset;
  prefetch.set_job_id(job_id);
  prefetch.set_hold_ms(hold_ms);
  opened->link->Send(message);
  return opened->id;
}

absl::StatusOr<uint64_t> Controller::SendDatasetEvict(const std::string& node,
                                                      uint32_t owner_uid,
                                                      const std::string& name) {
  DatasetRequest request;
  request.kind = DatasetRequest::Kind::kEvict;
  request.node = node;
  request.owner_uid = owner_uid;
  request.dataset = name;
  absl::StatusOr<OpenedDatasetRequest> opened =
      OpenDatasetRequest(std::move(request));
  if (!opened.ok()) return opened.status();
  v1::ControllerMessage message;
  v1::DatasetEvict& evict = *message.mutable_dataset_evict();
  evict.set_request_id(opened->id);
  evict.set_owner_uid(owner_uid);
  evict.set_name(name);
  opened->link->Send(message);
  return opened->id;
}

void Controller::OnDatasetCacheResult(const std::string& node_name,
                                      const v1::DatasetCacheResult& result) {
  if (!dataset_requests_.Finish(node_name, result, clock_.NowMs())) {
    log::Warn("dataset cache answer to no open request",
              {{"node", node_name}, {"request", result.request_id()}});
    return;
  }
  const DatasetRequest& request = *dataset_requests_.Find(result.request_id());
  const char* kind =
      request.kind == DatasetRequest::Kind::kPrefetch ? "prefetch" : "evict";
  if (result.ok()) {
    log::Info("dataset cache request done",
              {{"node", node_name},
               {"kind", kind},
               {"dataset", request.dataset},
               {"job", request.job_id},
               {"hit", result.hit() ? "yes" : "no"},
               {"copied", result.bytes_copied()}});
  } else {
    log::Warn("dataset cache request failed", {{"node", node_name},
                                               {"kind", kind},
                                               {"dataset", request.dataset},
                                               {"job", request.job_id},
                                               {"error", result.message()}});
  }
  // A node with room for more, or a failed copy to retry later.
  if (request.kind == DatasetRequest::Kind::kPrefetch) SendStagedAhead();
}

}  // namespace gantry
