// A feature beside the controller's core, in the shape of a job-manager
// plugin: it owns its state and learns what happens through the hooks
// below, which the core calls on the loop thread for each registered
// feature in the order they were registered. The core names no feature;
// gantryd registers them (ControllerOptions::features), and a feature's
// library links the core, never the other way round.
//
// A feature sees records, not the job table: it reads the jobs through its
// FeatureContext and changes nothing the core owns. Features live in
// daemon/controller/features/<name>/, each its own library with its own
// tests over a fake context
// (tests/unit/daemon/controller/features/fake_feature_context.h).
//
// Threading: every hook runs on the controller's loop thread; nothing here
// is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "common/clock.h"
#include "gantry/v1/client.pb.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

class ControllerMetrics;

// What a feature may read of the controller.
class FeatureContext {
 public:
  virtual ~FeatureContext() = default;
  virtual const Clock& clock() const = 0;
  // Where metrics go; null when the controller reports none (unit tests).
  virtual ControllerMetrics* metrics() const = 0;
  // Every job in the live state (pending, running and recently finished).
  virtual void ForEachJob(
      const std::function<void(const v1::JobRecord&)>& visit) const = 0;
  // The jobs that are pending, running or still hold nodes.
  virtual void ForEachLiveJob(
      const std::function<void(const v1::JobRecord&)>& visit) const = 0;
};

class ControllerFeature {
 public:
  virtual ~ControllerFeature() = default;

  // The state was loaded at start (every job is in the context by now).
  // `retired`: what jobs already moved to the history left behind, as last
  // stored (null: nothing stored yet).
  virtual void OnStateLoaded(const v1::FairShareRecord* /*retired*/) {}
  // A job's record changed; the change is staged for the next commit.
  virtual void OnJobChanged(const v1::JobRecord& /*job*/) {}
  // A job reached a terminal state (once per job).
  virtual void OnJobFinished(const v1::JobRecord& /*job*/) {}
  // A finished job leaves the live state for the history; its record is
  // still whole here.
  virtual void OnJobRetired(const v1::JobRecord& /*job*/) {}
  // The record of what retired jobs left behind is about to be stored
  // (after OnJobRetired calls): add this feature's part.
  virtual void SaveRetired(v1::FairShareRecord& /*retired*/) {}
  // Every controller tick (a quarter of a second); `tick` counts from 1.
  virtual void OnTick(uint64_t /*tick*/) {}
  // gantry status: add this feature's figures.
  virtual void FillStatus(v1::ClusterStatusResponse& /*status*/) const {}
};

// Makes a feature for a controller; `context` outlives it.
using FeatureFactory =
    std::function<std::unique_ptr<ControllerFeature>(const FeatureContext&)>;

}  // namespace gantry
