// The cluster's indexes (cluster_state.h).
#include "daemon/controller/core/cluster_state.h"

namespace gantry {

void ClusterState::Reindex(JobRuntime& job) {
  const uint64_t id = job.record.id();
  const v1::JobState state = job.record.state();
  if (state == v1::PENDING || state == v1::RUNNING ||
      !job.occupied_nodes.empty()) {
    live_jobs.insert_or_assign(live_jobs.end(), id, &job);
  } else {
    live_jobs.erase(id);
  }
  if (state == v1::RUNNING ||
      (state == v1::PENDING && job.record.spec().deadline_ms() > 0)) {
    timed_jobs.insert_or_assign(id, &job);
  } else {
    timed_jobs.erase(id);
  }
}

const v1::JobRecord* ClusterState::FindJobRecord(uint64_t id) const {
  auto it = jobs.find(id);
  return it == jobs.end() ? nullptr : &it->second.record;
}

const v1::NodeRecord* ClusterState::FindNodeRecord(
    const std::string& name) const {
  auto it = nodes.find(name);
  return it == nodes.end() ? nullptr : &it->second.record;
}

}  // namespace gantry
