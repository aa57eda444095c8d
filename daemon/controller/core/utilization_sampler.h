// Samples the cluster's GPU use (allocated of total, from the node table)
// every few seconds into a UtilizationHistory, for `gantry status`. In
// memory only: a restarted controller starts a fresh history.
//
// Threading: the controller's loop only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/clock.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/utilization_history.h"

namespace gantry {

class UtilizationSampler {
 public:
  // `state` outlives this.
  UtilizationSampler(boost::asio::io_context& io, const Clock& clock,
                     const ClusterState& state);

  // Samples now, then every few seconds until Stop.
  void Start();
  void Stop();

  const UtilizationHistory& history() const { return history_; }

 private:
  void Sample();
  void Arm();

  const Clock& clock_;
  const ClusterState& state_;
  boost::asio::steady_timer timer_;
  UtilizationHistory history_;
  bool stopped_ = false;
};

}  // namespace gantry
