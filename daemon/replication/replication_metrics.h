// Prometheus metrics of a replicated controller (gantryd --etcd), exported
// by the leader and by every standby on its --metrics-listen endpoint, so
// an alert can fire on a standby that has stopped following:
//
//   gantry_replication_is_leader            1 on a leader whose lease is
//                                           surely held (Leadership::Valid),
//                                           0 on a standby and on a leader
//                                           that lapsed (a pause, etcd lost)
//   gantry_replication_forged_records_total records in etcd refused because
//                                           the cluster key did not seal them
//   gantry_replication_leader_term          the leader key's creation
//                                           revision: changes with each
//                                           new leader (0: none)
//   gantry_replication_leader_changes_total new leaders this gantryd saw
//                                           take office since it started
//   gantry_replication_applied_index        the last log entry applied here
//   gantry_replication_leader_index         the leader's last log entry
//   gantry_replication_lag_entries          how far this gantryd is behind
//   gantry_replication_lag_seconds          since when (0: caught up)
//   gantry_replication_etcd_members{state}  etcd members reachable or not
//   gantry_replication_etcd_foreign_members endpoints answering for another
//                                           etcd cluster (an alarm)
//
// is_leader is refreshed every 100 ms by a thread of its own (so a leader
// woken from a pause past its lease shows 0 at once, whatever etcd does);
// a sampler thread refreshes the others every second: its own figures from
// memory, the leader's from etcd (one transaction reading the leader key
// and the member records), etcd's members every fifth time. A gantryd
// re-executed as a standby (step_down.h) starts counting from zero again;
// the term survives that, so alert on changes() of it.
//
// Thread-safe: the sampler writes the metrics, the endpoint reads them.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "daemon/replication/replicated_controller.h"

namespace gantry::replication {

// How far behind the leader a standby is, in entries and in time. Pure:
// fed each sample's figures with the time.
class LagTracker {
 public:
  struct Lag {
    uint64_t entries = 0;
    double seconds = 0;
  };
  // `applied`: this controller's last applied entry; `leader_index`: the
  // leader's last entry as last read (0: unknown). Time counts from the
  // last sample that found this controller caught up.
  Lag Update(uint64_t applied, uint64_t leader_index, int64_t now_ms);

 private:
  int64_t caught_up_ms_ = -1;  // -1: not yet seen caught up
  int64_t first_ms_ = -1;
};

class ReplicationMetrics {
 public:
  // Registers the families in `registry` (which must outlive this) and
  // starts sampling `controller` (which must too).
  ReplicationMetrics(prometheus::Registry& registry,
                     ReplicatedController& controller);
  ~ReplicationMetrics();
  ReplicationMetrics(const ReplicationMetrics&) = delete;
  ReplicationMetrics& operator=(const ReplicationMetrics&) = delete;

 private:
  void SampleLoop();
  void ValidityLoop();
  void Sample(bool ask_etcd_health);

  ReplicatedController& controller_;
  prometheus::Gauge& is_leader_;
  prometheus::Gauge& leader_term_;
  prometheus::Counter& leader_changes_;
  prometheus::Gauge& applied_index_;
  prometheus::Gauge& leader_index_;
  prometheus::Gauge& lag_entries_;
  prometheus::Gauge& lag_seconds_;
  prometheus::Family<prometheus::Gauge>& etcd_members_;
  prometheus::Gauge& etcd_reachable_;
  prometheus::Gauge& etcd_unreachable_;
  prometheus::Gauge& etcd_foreign_;
  prometheus::Counter& forged_records_;

  // The sampler's own (its thread only).
  LagTracker lag_;
  int64_t last_term_ = 0;
  uint64_t last_leader_index_ = 0;
  uint64_t forged_counted_ = 0;

  Mutex mutex_;
  CondVar stop_changed_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread sampler_;  // last: start once the rest is built
  std::thread validity_;
};

}  // namespace gantry::replication
