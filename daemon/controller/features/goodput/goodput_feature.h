// The cluster's goodput over the last day (`gantry status`, the
// gantry_goodput_* metrics): how the time of the jobs of the last 24 hours
// splits into queued, starting, productive, lost, detecting and recovering
// (daemon/controller/goodput.h, from each job's attempt times).
//
// The jobs in the live state are followed in a tracker, updated whenever a
// job's record changes and every five seconds for the live ones (their
// open segments grow); the jobs that left for the history are summed in a
// ledger stored with the usage they leave behind, so a restart restores
// the last day instead of forgetting it.
#pragma once

#include <cstdint>
#include <memory>

#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/features/goodput/goodput_ledger.h"

namespace gantry {

class GoodputFeature : public ControllerFeature {
 public:
  // The live jobs' open segments are brought up to date this often.
  static constexpr uint64_t kTicksPerRefresh = 20;

  explicit GoodputFeature(const FeatureContext& context);

  void OnStateLoaded(const v1::FairShareRecord* retired) override;
  void OnJobChanged(const v1::JobRecord& job) override;
  void OnJobFinished(const v1::JobRecord& job) override;
  void OnJobRetired(const v1::JobRecord& job) override;
  void SaveRetired(v1::FairShareRecord& retired) override;
  void OnTick(uint64_t tick) override;
  void FillStatus(v1::ClusterStatusResponse& status) const override;

  // The last day's totals: the followed jobs and the retired ones.
  GoodputTotals LastDay() const;

 private:
  // The job's timeline as of `now_ms` replaces what was counted for it.
  void Follow(const v1::JobRecord& job, int64_t now_ms);
  // Drops the buckets of both ledgers that left the day.
  void Prune(int64_t now_ms);

  const FeatureContext& context_;
  GoodputTracker live_;
  GoodputLedger retired_;
};

std::unique_ptr<ControllerFeature> MakeGoodputFeature(
    const FeatureContext& context);

}  // namespace gantry
