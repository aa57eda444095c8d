#include "daemon/replication/replicated_batch.h"

#include <utility>

namespace gantry::replication {

v1::ReplicatedBatch ToReplicated(const StateStore::Batch& batch) {
  v1::ReplicatedBatch out;
  for (const v1::JobRecord& job : batch.jobs) *out.add_jobs() = job;
  for (const v1::NodeRecord& node : batch.nodes) *out.add_nodes() = node;
  for (const v1::EventRecord& event : batch.events) *out.add_events() = event;
  for (const auto& [id, environment] : batch.environments) {
    v1::ReplicatedBatch::Environment* entry = out.add_environments();
    entry->set_environment_id(id);
    *entry->mutable_environment() = environment;
  }
  if (batch.next_job_id) out.set_next_job_id(*batch.next_job_id);
  if (batch.next_event_sequence) {
    out.set_next_event_sequence(*batch.next_event_sequence);
  }
  if (batch.cluster_id) out.set_cluster_id(*batch.cluster_id);
  if (batch.topology) *out.mutable_topology() = *batch.topology;
  for (const v1::JobRecord& job : batch.retired) *out.add_retired() = job;
  for (uint64_t id : batch.expired) out.add_expired(id);
  if (batch.retired_usage) *out.mutable_retired_usage() = *batch.retired_usage;
  return out;
}

StateStore::Batch FromReplicated(v1::ReplicatedBatch replicated) {
  StateStore::Batch batch;
  for (v1::JobRecord& job : *replicated.mutable_jobs()) {
    batch.jobs.push_back(std::move(job));
  }
  for (v1::NodeRecord& node : *replicated.mutable_nodes()) {
    batch.nodes.push_back(std::move(node));
  }
  for (v1::EventRecord& event : *replicated.mutable_events()) {
    batch.events.push_back(std::move(event));
  }
  for (v1::ReplicatedBatch::Environment& entry :
       *replicated.mutable_environments()) {
    batch.environments.emplace_back(entry.environment_id(),
                                    std::move(*entry.mutable_environment()));
  }
  if (replicated.has_next_job_id()) {
    batch.next_job_id = replicated.next_job_id();
  }
  if (replicated.has_next_event_sequence()) {
    batch.next_event_sequence = replicated.next_event_sequence();
  }
  if (replicated.has_cluster_id()) batch.cluster_id = replicated.cluster_id();
  if (replicated.has_topology()) {
    batch.topology = std::move(*replicated.mutable_topology());
  }
  for (v1::JobRecord& job : *replicated.mutable_retired()) {
    batch.retired.push_back(std::move(job));
  }
  for (uint64_t id : replicated.expired()) batch.expired.push_back(id);
  if (replicated.has_retired_usage()) {
    batch.retired_usage = std::move(*replicated.mutable_retired_usage());
  }
  return batch;
}

}  // namespace gantry::replication
