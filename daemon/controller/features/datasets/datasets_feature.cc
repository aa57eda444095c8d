// Datasets beside the core (datasets_feature.h): the hooks, each node's
// staging progress, and the requests sent to the agents.
#include "daemon/controller/features/datasets/datasets_feature.h"

#include <utility>

#include "common/log.h"
#include "daemon/controller/core/staging_reason.h"

namespace gantry {

DatasetsFeature::DatasetsFeature(FeatureContext& context,
                                 StageAheadOptions stage_ahead)
    : context_(context), waits_(context.io()), stage_ahead_(stage_ahead) {}

void DatasetsFeature::OnJobChanged(const v1::JobRecord& job) {
  // Staged ahead only while it waits.
  if (job.state() != v1::PENDING) stage_ahead_.Forget(job.id());
}

void DatasetsFeature::OnNodeRegistered(const std::string& node,
                                       const v1::Register& registration) {
  const std::string& instance = registration.agent_instance();
  auto [it, first] = agent_instances_.try_emplace(node, instance);
  const bool same_agent = !first && !instance.empty() && it->second == instance;
  it->second = instance;
  // A new agent process holds none of what was sent to the old one. (A
  // node first seen since this controller started was sent nothing: no
  // send goes to a node without a connected agent.)
  if (!same_agent) stage_ahead_.NodeRestarted(node);
}

void DatasetsFeature::OnNodeDisconnected(const std::string& node) {
  requests_.NodeGone(node, context_.clock().NowMs());
  waits_.Check(requests_);
}

void DatasetsFeature::OnAgentMessage(const std::string& node,
                                     const v1::AgentMessage& message) {
  if (message.has_dataset_progress()) {
    OnProgress(node, message.dataset_progress());
  }
  if (message.has_dataset_cache_result()) {
    OnCacheResult(node, message.dataset_cache_result());
    waits_.Check(requests_);
  }
}

void DatasetsFeature::OnStop() {
  stopped_ = true;
  waits_.Stop();
}

void DatasetsFeature::FillStatus(v1::ClusterStatusResponse& status) const {
  *status.mutable_dataset_cache() = SummarizeDatasetCache(NodeCaches());
}

void DatasetsFeature::OnProgress(const std::string& node_name,
                                 const v1::DatasetProgress& progress) {
  const v1::JobRecord* job = context_.FindJob(progress.job_id());
  if (job == nullptr || job->attempt() != progress.attempt() ||
      job->state() != v1::RUNNING) {
    return;  // a stale report of an earlier attempt
  }
  bool on_node = false;
  for (const v1::NodeAllocation& share : job->allocation()) {
    on_node = on_node || share.node() == node_name;
  }
  if (!on_node) return;  // only the job's own nodes speak for it
  // Reported every few seconds by every node of the job: kept with the
  // job's next staged change rather than written each time.
  context_.UpdateJobUnstaged(progress.job_id(), [&](v1::JobRecord& record) {
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
    const int expected =
        record.allocation_size() * record.spec().datasets_size();
    int done = 0;
    for (const v1::DatasetStaging& staging : record.dataset_staging()) {
      if (staging.done()) ++done;
    }
    ShowStaging(record, done < expected);
  });
  if (progress.done()) {
    log::Info("dataset staged", {{"job", progress.job_id()},
                                 {"node", node_name},
                                 {"dataset", progress.dataset()},
                                 {"hit", progress.hit() ? "yes" : "no"},
                                 {"bytes", progress.bytes_total()},
                                 {"copied", progress.bytes_copied()}});
  }
}

absl::StatusOr<uint64_t> DatasetsFeature::Send(
    DatasetRequest request,
    const std::function<void(uint64_t id, v1::ControllerMessage&)>& fill) {
  const std::string node = request.node;
  if (context_.FindNode(node) == nullptr) {
    return absl::NotFoundError("no node named " + node);
  }
  if (!context_.NodeConnected(node)) {
    return absl::UnavailableError("node " + node + " has no connected agent");
  }
  request.sent_ms = context_.clock().NowMs();
  const uint64_t id = requests_.Add(std::move(request));
  v1::ControllerMessage message;
  fill(id, message);
  // Connected just now, on the same loop turn: the send reaches its stream.
  context_.SendToNode(node, message);
  return id;
}

absl::StatusOr<uint64_t> DatasetsFeature::SendPrefetch(
    const std::string& node, const DatasetOwner& owner,
    const v1::DatasetRef& dataset, uint64_t job_id, int64_t hold_ms) {
  DatasetRequest request;
  request.kind = DatasetRequest::Kind::kPrefetch;
  request.node = node;
  request.owner_uid = owner.uid;
  request.dataset = dataset.name();
  request.path = dataset.path();
  request.job_id = job_id;
  return Send(
      std::move(request), [&](uint64_t id, v1::ControllerMessage& message) {
        v1::DatasetPrefetch& prefetch = *message.mutable_dataset_prefetch();
        prefetch.set_request_id(id);
        prefetch.set_uid(owner.uid);
        prefetch.set_gid(owner.gid);
        prefetch.set_user(owner.user);
        *prefetch.mutable_dataset() = dataset;
        prefetch.set_job_id(job_id);
        prefetch.set_hold_ms(hold_ms);
      });
}

absl::StatusOr<uint64_t> DatasetsFeature::SendEvict(const std::string& node,
                                                    uint32_t owner_uid,
                                                    const std::string& name) {
  DatasetRequest request;
  request.kind = DatasetRequest::Kind::kEvict;
  request.node = node;
  request.owner_uid = owner_uid;
  request.dataset = name;
  return Send(std::move(request),
              [&](uint64_t id, v1::ControllerMessage& message) {
                v1::DatasetEvict& evict = *message.mutable_dataset_evict();
                evict.set_request_id(id);
                evict.set_owner_uid(owner_uid);
                evict.set_name(name);
              });
}

void DatasetsFeature::OnCacheResult(const std::string& node_name,
                                    const v1::DatasetCacheResult& result) {
  if (!requests_.Finish(node_name, result, context_.clock().NowMs())) {
    log::Warn("dataset cache answer to no open request",
              {{"node", node_name}, {"request", result.request_id()}});
    return;
  }
  const DatasetRequest& request = *requests_.Find(result.request_id());
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

std::vector<NodeCacheState> DatasetsFeature::NodeCaches() const {
  std::vector<NodeCacheState> nodes;
  context_.ForEachNode([&nodes](const v1::NodeRecord& node, bool connected,
                                const v1::DatasetCacheReport& report) {
    nodes.push_back({node.name(), &report, connected});
  });
  return nodes;
}

}  // namespace gantry
