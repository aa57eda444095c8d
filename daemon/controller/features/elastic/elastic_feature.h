// Growing --elastic jobs back to their full size. A job with a node range
// (--nodes=MIN-MAX) may start, or restart after a failure, below MAX; a
// restart already tries the full size first (the scheduler's part:
// daemon/scheduler/node_range.h). This is the other way back, for jobs
// that said they take a change of size at any time (--elastic, a torchrun
// elastic rendezvous): after each scheduling pass, a running one below its
// full size is restarted onto MAX nodes when the missing ones are free
// beside its own, at its next checkpoint or at once (DecideGrow), uncharged.
//
// In memory only: a restarted controller decides afresh.
//
// Threading: the controller's loop thread only (controller_feature.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>

#include "daemon/controller/core/controller_feature.h"

namespace gantry {

class ElasticFeature : public ControllerFeature {
 public:
  explicit ElasticFeature(FeatureContext& context);

  void OnStateLoaded(const v1::FairShareRecord* retired) override;
  void OnJobStarted(const v1::JobRecord& job) override;
  void OnCheckpoint(const v1::JobRecord& job) override;
  void AfterSchedulingPass() override;

 private:
  // A grow planned for the job's next checkpoint: the attempt, and the
  // time of the checkpoint known when it was decided.
  struct GrowWait {
    uint32_t attempt = 0;
    int64_t checkpoint_ms = 0;
  };

  // Restarts the job onto `to_nodes` nodes: requeued at once, uncharged.
  void Grow(const v1::JobRecord& job, uint32_t to_nodes);

  FeatureContext& context_;
  // Running --elastic jobs with a node range that started below their
  // full size (a pass looks at these only); one found otherwise leaves.
  std::set<uint64_t> below_full_size_;
  std::map<uint64_t, GrowWait> waits_;
};

std::unique_ptr<ControllerFeature> MakeElasticFeature(FeatureContext& context);

}  // namespace gantry
