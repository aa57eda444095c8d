// Stragglers: per-node progress of the running attempts (from the agents'
// heartbeats and from ranks' `gantry progress`), judged about once a
// second by the pure rules of daemon/scheduler/straggler_detector.h. What
// is found is shown (gantry job, gantry status, the gantry_straggler_*
// metrics) and, with --straggler-policy=swap, acted on at the job's next
// checkpoint: the straggler is drained with the reason and the job
// restarts from that checkpoint without it. Such a restart is gantryd's
// choice, not a failure of the job: it is not charged against
// --max-restarts. Without a placement for the job without it (the
// scheduler's own test), a straggler is only reported: a restart would
// land on it again, or wait forever.
//
// Threading: the controller's loop thread only (controller_feature.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/features/stragglers/job_progress.h"
#include "daemon/scheduler/straggler_detector.h"

namespace gantry {

// gantryd's --straggler-* flags.
struct StragglerSettings {
  // What is done about stragglers (--straggler-policy).
  StragglerResponse response = StragglerResponse::kReport;
  // What makes one (--straggler-factor, --straggler-duration,
  // --straggler-min-peers).
  StragglerPolicy policy;
  // The agents' heartbeat interval: reports may be a few heartbeats old
  // without the node being stalled.
  int64_t heartbeat_interval_ms = 1000;
};

class StragglerFeature : public ControllerFeature {
 public:
  // Stragglers are looked for this often.
  static constexpr int64_t kCheckEveryMs = 1000;

  StragglerFeature(FeatureContext& context, StragglerSettings settings);

  void OnTick(uint64_t tick) override;
  void FillStatus(v1::ClusterStatusResponse& status) const override;
  void FillJob(const v1::JobRecord& job,
               v1::GetJobResponse& reply) const override;
  void OnHeartbeat(const std::string& node,
                   const v1::Heartbeat& heartbeat) override;
  absl::Status OnProgressReport(
      const v1::JobRecord& job,
      const v1::ReportProgressRequest& report) override;
  void OnCheckpoint(const v1::JobRecord& job) override;

 private:
  // The progress kept for the job's current attempt (a new attempt starts
  // afresh).
  JobProgress& ProgressOf(const v1::JobRecord& job);
  // Judges every running attempt; logs and records each new straggler once
  // and publishes the gauges.
  void Check(int64_t monotonic_ms);
  // The job's progress and stragglers for replies; none when not known.
  std::optional<v1::JobStragglers> View(const v1::JobRecord& job,
                                        bool with_nodes) const;
  // How many of `stragglers` (in their order) the job can restart without.
  size_t Swappable(const v1::JobRecord& job,
                   const std::vector<StragglerFinding>& stragglers) const;

  FeatureContext& context_;
  const StragglerSettings settings_;
  std::map<uint64_t, JobProgress> progress_;  // by job id
  int64_t next_check_ms_ = 0;
};

// For gantryd's feature list (standard_features.h).
FeatureFactory StragglerFeatureFactory(StragglerSettings settings);

}  // namespace gantry
