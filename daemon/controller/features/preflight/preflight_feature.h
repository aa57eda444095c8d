// The pre-flight gang check (docs/user-guide.md "Pre-flight"). A job
// attempt that wants it starts as any other (RUNNING, its nodes taken), but
// its launch is held: every node of the allocation gets a PreflightCheck,
// and once all answered (or the deadline passed) the verdict
// (daemon/scheduler/preflight_verdict.h) decides. A pass releases the
// launch. A failure drains the nodes to blame, with the reason, and ends
// the attempt uncharged: the job goes back to PENDING (reason and attempt
// end "Preflight"), is placed again on other nodes (hot spares first, as any
// restart) and is checked again; if no node is free it waits. No rank ran,
// so the job has seen no failure: the attempt costs none of its
// --max-restarts, and GANTRY_RESTART_COUNT does not count it. Most of the
// gang failing at once blames nobody and holds the job for a person.
//
// The attempt record keeps the check's times, summary and findings (for
// gantry job and goodput); the rounds in flight live here, in memory: a
// check a controller restart lost is sent again once every node is back.
//
// Threading: the controller's loop thread only (controller_feature.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/features/preflight/preflight_rounds.h"
#include "daemon/scheduler/preflight_verdict.h"

namespace gantry {

class PreflightFeature : public ControllerFeature {
 public:
  // Time the agents' answers get on top of the check's own timeout.
  static constexpr int64_t kAnswerGraceMs = 2000;

  PreflightFeature(FeatureContext& context, PreflightOptions options);

  void OnNodeRegistered(const std::string& node,
                        const v1::Register& registration) override;
  void OnAgentMessage(const std::string& node,
                      const v1::AgentMessage& message) override;
  void OnJobStarted(const v1::JobRecord& job) override;
  bool HoldLaunch(const v1::JobRecord& job, bool whole) override;
  bool HoldsRanks(const v1::JobRecord& job) override;
  bool OnNodeLost(const v1::JobRecord& job, const std::string& node) override;
  void OnTick(uint64_t tick) override;

 private:
  // Sends the check to the allocation's nodes (instead of the launch).
  void Send(const v1::JobRecord& job);
  // The verdict, from the answers so far: releases the launch or rejects.
  void Finish(const v1::JobRecord& job);
  void Reject(const v1::JobRecord& job,
              const std::vector<PreflightRejection>& rejected, size_t gang);

  FeatureContext& context_;
  const PreflightOptions options_;
  PreflightRounds rounds_;
};

// For gantryd's feature list (standard_features.h).
FeatureFactory PreflightFeatureFactory(const PreflightOptions& options);

}  // namespace gantry
