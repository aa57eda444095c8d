// Datasets beside the controller's core: each running job's staging as
// its nodes report it (the job's reason is Staging until every node has
// every dataset), `gantry cache` (list, prefetch, evict: requests sent to
// the agents, the calls answered off the loop once the nodes answer),
// staging a waiting job's datasets ahead onto the nodes its backfill
// reservation expects it to start on (stage_ahead.h), and the cluster's
// cache use in `gantry status`.
//
// The prefetches and evictions sent and what was staged ahead are in
// memory only: after a gantryd restart the next pass sends again, and an
// agent that holds a copy answers with a cheap hit.
//
// Threading: the controller's loop, like every feature.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/features/datasets/dataset_cache_view.h"
#include "daemon/controller/features/datasets/dataset_cache_waits.h"
#include "daemon/controller/features/datasets/dataset_requests.h"
#include "daemon/controller/features/datasets/stage_ahead.h"
#include "gantry/v1/dataset_cache.pb.h"

namespace gantry {

class DatasetsFeature final : public ControllerFeature {
 public:
  DatasetsFeature(FeatureContext& context, StageAheadOptions stage_ahead);

  // `gantry cache` (datasets_cache_calls.cc): the caches' copies the
  // caller may see; a prefetch (as the caller) or an eviction on each
  // node, `done` once every node answered or the request's wait ran out.
  // NOT_FOUND for unknown nodes, PERMISSION_DENIED for another user's
  // datasets without admin rights; nothing is sent then.
  absl::StatusOr<v1::ListDatasetCacheResponse> ListDatasetCache(
      const v1::ListDatasetCacheRequest& request, const Caller& caller) const;
  using Answer =
      std::function<void(absl::StatusOr<v1::DatasetCacheActionResponse>)>;
  void PrefetchDataset(const v1::PrefetchDatasetRequest& request,
                       const Caller& caller, Answer done);
  void EvictDataset(const v1::EvictDatasetRequest& request,
                    const Caller& caller, Answer done);

  // Hooks (datasets_feature.cc, datasets_stage_ahead.cc).
  void OnJobChanged(const v1::JobRecord& job) override;
  void OnNodeRegistered(const std::string& node,
                        const v1::Register& registration) override;
  void OnNodeDisconnected(const std::string& node) override;
  void OnAgentMessage(const std::string& node,
                      const v1::AgentMessage& message) override;
  void OnReservations(
      const std::vector<Reservation>& reservations,
      const std::vector<const std::string*>& node_names) override;
  void OnTick(uint64_t tick) override;
  void FillJob(const v1::JobRecord& job,
               v1::GetJobResponse& reply) const override;
  void FillStatus(v1::ClusterStatusResponse& status) const override;
  void OnStop() override;

 private:
  // A node's staging progress for one of its running jobs.
  void OnProgress(const std::string& node, const v1::DatasetProgress& progress);
  // An agent's answer to a prefetch or an eviction.
  void OnCacheResult(const std::string& node,
                     const v1::DatasetCacheResult& result);
  // Asks `node`'s agent to copy `dataset` into its cache as `owner` (a
  // prefetch; `job_id` non-zero: staged ahead for that waiting job, pinned
  // for it at most `hold_ms`), or to drop the owner's dataset `name`.
  // Returns the request's id; NOT_FOUND for an unknown node, UNAVAILABLE
  // when its agent is not connected.
  absl::StatusOr<uint64_t> SendPrefetch(const std::string& node,
                                        const DatasetOwner& owner,
                                        const v1::DatasetRef& dataset,
                                        uint64_t job_id, int64_t hold_ms);
  absl::StatusOr<uint64_t> SendEvict(const std::string& node,
                                     uint32_t owner_uid,
                                     const std::string& name);
  // Records `request` and sends `message` (given the request's id) to its
  // node; the errors of SendPrefetch.
  absl::StatusOr<uint64_t> Send(
      DatasetRequest request,
      const std::function<void(uint64_t id, v1::ControllerMessage&)>& fill);
  // Every node's last cache report, as the core holds them.
  std::vector<NodeCacheState> NodeCaches() const;
  // `send` to each of `nodes` (a node it cannot reach fails at once), then
  // the answer once every request sent is done or `wait_seconds` have
  // passed (0: at once).
  void SendAndAwait(
      uint32_t owner_uid, const std::vector<std::string>& nodes,
      const std::function<absl::StatusOr<uint64_t>(const std::string&)>& send,
      uint32_t wait_seconds, Answer done);
  // Sends what the stage-ahead planner plans now.
  void SendStagedAhead();

  FeatureContext& context_;
  DatasetRequests requests_;
  DatasetCacheWaits waits_;
  StageAheadPlanner stage_ahead_;
  // Each node's agent process as it last registered: a different one
  // lost what this controller sent ahead to it.
  std::map<std::string, std::string> agent_instances_;
  // The reserved jobs' expected starts as of the last pass (for the log).
  std::map<uint64_t, int64_t> expected_start_ms_;
  bool stopped_ = false;
};

}  // namespace gantry
