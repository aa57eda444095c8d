// Staging ahead: while a job waits for its backfill reservation, gantryd
// copies the job's datasets (--dataset) into the caches of the nodes the
// reservation expects it to start on, so that its launch there finds them
// cached (a hit: nothing copied while the job's nodes sit idle).
//
// StageAheadPlanner decides which (node, dataset) prefetches to send now:
// given the last scheduling pass's reservations (SetTargets), what it has
// already sent for each job (Sent) and the agents' answers (read from
// DatasetRequests), and the time. The controller sends what Plan returns
// (DatasetsFeature::OnReservations, datasets_stage_ahead.cc); this class
// does no I/O and reads no clock.
//
// The rules:
//  - only reservations expected to start within `window_ms` of now;
//  - each (job, node, dataset) once: again only after a failed answer and
//    its back-off (doubling from min_retry_ms up to max_retry_ms), or when
//    the pin an earlier copy got would lapse before the job's expected
//    start (its reservation moved later), which the agent answers cheaply
//    as a hit;
//  - a reservation that moves to other nodes gets sends for the new ones;
//  - at most max_in_flight_per_node unanswered prefetches on one node
//    (counting every prefetch in DatasetRequests, `gantry cache` too) and
//    at most max_sends_per_pass sends per Plan, soonest start first, so a
//    long queue cannot flood the agents.
// The record is kept per job until Forget (the job started, ended or was
// cancelled). It is in memory only: after a gantryd restart the next pass
// sends again, and each agent answers a copy it already holds as a hit,
// which costs it a walk over the files and copies nothing.
//
// Not thread-safe: owned by the controller's loop.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/controller/features/datasets/dataset_requests.h"

namespace gantry {

struct StageAheadOptions {
  // How far ahead of a reservation's expected start its datasets are
  // staged (gantryd --stage-ahead); 0: never.
  int64_t window_ms = 3'600'000;
  // How long past the expected start a staged copy stays pinned for the
  // job should it not start there (hold_ms of the prefetch).
  int64_t hold_margin_ms = 900'000;
  int64_t min_retry_ms = 30'000;
  int64_t max_retry_ms = 900'000;
  int max_in_flight_per_node = 2;
  int max_sends_per_pass = 32;
};

// A reservation of a waiting job that declares datasets.
struct StageAheadTarget {
  uint64_t job_id = 0;
  int64_t start_ms = 0;  // expected start
  // The reserved nodes the job's datasets may be staged on now (the
  // controller leaves out those with no connected agent).
  std::vector<std::string> nodes;
  std::vector<std::string> datasets;  // the job's dataset NAMEs
};

// One prefetch to send: `dataset` of `job_id` to `node`, pinned for the
// job at most `hold_ms`.
struct StageAheadSend {
  uint64_t job_id = 0;
  std::string node;
  std::string dataset;
  int64_t hold_ms = 0;
};

class StageAheadPlanner {
 public:
  explicit StageAheadPlanner(StageAheadOptions options = {});

  bool enabled() const { return options_.window_ms > 0; }
  const StageAheadOptions& options() const { return options_; }

  // The last scheduling pass's reservations; replaces the ones before.
  void SetTargets(std::vector<StageAheadTarget> targets);
  // The prefetches to send now, soonest expected start first. `requests`
  // holds the answers to the ones recorded with Sent.
  std::vector<StageAheadSend> Plan(const DatasetRequests& requests,
                                   int64_t now_ms);
  // `send` went out as request `request_id` (a send Plan returned that
  // the controller could not deliver is simply not recorded: the next
  // Plan proposes it again).
  void Sent(const StageAheadSend& send, uint64_t request_id, int64_t now_ms);
  // The job no longer waits: drops its record and its target.
  void Forget(uint64_t job_id);
  // `node`'s agent restarted (or the node rebooted): the holds it kept for
  // waiting jobs are gone with it (an agent keeps them in memory only), so
  // every copy sent there is to be asked for again; the agent answers one
  // it still holds as a hit and holds it anew.
  void NodeRestarted(const std::string& node);
  // When a Plan with the same targets and answers may send more (a
  // reservation entering the window, a back-off ending, a pin to renew);
  // 0: not before something changes. Set by Plan.
  int64_t next_plan_ms() const { return next_plan_ms_; }
  // Jobs with a record (bounded memory).
  size_t recorded_jobs() const { return sent_.size(); }

 private:
  // The latest prefetch of one (node, dataset) for a job.
  struct Entry {
    uint64_t request_id = 0;
    int64_t sent_ms = 0;
    int64_t pinned_until_ms = 0;  // at the latest: sent_ms + hold_ms
    bool answered = false;
    bool ok = false;
    int64_t answered_ms = 0;
    int failures = 0;  // failed answers in a row
  };
  using Key = std::pair<std::string, std::string>;  // node, dataset

  // Copies the agent's answer into `entry` once there is one.
  static void Update(Entry& entry, const DatasetRequests& requests,
                     int64_t now_ms);
  // When `entry` may be sent again for a job starting at start_ms.
  int64_t ResendAt(const Entry& entry, int64_t start_ms) const;
  int64_t HoldMs(int64_t start_ms, int64_t now_ms) const;

  StageAheadOptions options_;
  std::vector<StageAheadTarget> targets_;
  std::map<uint64_t, std::map<Key, Entry>> sent_;  // by job id
  int64_t next_plan_ms_ = 0;
};

}  // namespace gantry
