// The cluster's goodput over a sliding day: job time per segment
// (goodput.h) in time buckets, so `gantry status` and the metrics read a
// sum of a few hundred buckets instead of walking every job, and a job's
// change adds only what changed.
//
// GoodputLedger holds the buckets; GoodputTracker remembers what it added
// for each job it follows, so that a job's new timeline (a failure turns
// productive time into lost time after the fact) replaces the old one.
// The controller keeps a tracker for the jobs in its live state and a
// ledger, stored with each retirement, for the jobs that left it: a
// restart rebuilds the first from the jobs it loads and restores the
// second.
//
// Threading: not thread-safe; the controller's loop thread owns both.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/controller/core/goodput.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

class GoodputLedger {
 public:
  static constexpr int64_t kDefaultBucketMs = 600'000;
  static constexpr int64_t kDefaultWindowMs = 86'400'000;

  explicit GoodputLedger(int64_t bucket_ms = kDefaultBucketMs,
                         int64_t window_ms = kDefaultWindowMs);

  int64_t window_ms() const { return window_ms_; }

  // Adds (sign 1) or takes away (sign -1) the intervals' time, each
  // millisecond in the bucket it falls in. Time before the oldest bucket
  // kept (see Prune) is not counted.
  void Add(const std::vector<GoodputInterval>& intervals, int sign);
  // The time in (now_ms - window, now_ms]: the buckets inside whole, the
  // one across the window's start in proportion to its part inside.
  GoodputTotals Window(int64_t now_ms) const;
  // Drops the buckets wholly before the window; later Adds skip that time.
  void Prune(int64_t now_ms);

  v1::GoodputLedgerRecord ToRecord() const;
  // Replaces the buckets with a stored record's. False (and nothing
  // changes) when it was written with another bucket size.
  bool Restore(const v1::GoodputLedgerRecord& record);

 private:
  void AddSpan(GoodputKind segment, int64_t begin_ms, int64_t end_ms, int sign);

  int64_t bucket_ms_;
  int64_t window_ms_;
  int64_t floor_ms_;  // the start of the oldest bucket kept
  std::map<int64_t, GoodputTotals> buckets_;  // by bucket start
};

class GoodputTracker {
 public:
  explicit GoodputTracker(GoodputLedger ledger = GoodputLedger())
      : ledger_(std::move(ledger)) {}

  // The job's timeline now replaces what was counted for it before: only
  // the difference is added (usually the newest interval's growth).
  void Update(uint64_t job_id, std::vector<GoodputInterval> timeline);
  // Stops following the job and takes its time out of the ledger; returns
  // the intervals that were counted (empty for a job not followed).
  std::vector<GoodputInterval> Remove(uint64_t job_id);
  size_t size() const { return counted_.size(); }

  GoodputLedger& ledger() { return ledger_; }
  const GoodputLedger& ledger() const { return ledger_; }

 private:
  GoodputLedger ledger_;
  std::unordered_map<uint64_t, std::vector<GoodputInterval>> counted_;
};

}  // namespace gantry
