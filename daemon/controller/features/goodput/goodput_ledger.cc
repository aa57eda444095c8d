#include "daemon/controller/features/goodput/goodput_ledger.h"

#include <algorithm>
#include <limits>

namespace gantry {
namespace {

int64_t FloorTo(int64_t value, int64_t step) {
  int64_t floored = value - value % step;
  if (value % step < 0) floored -= step;
  return floored;
}

}  // namespace

GoodputLedger::GoodputLedger(int64_t bucket_ms, int64_t window_ms)
    : bucket_ms_(std::max<int64_t>(1, bucket_ms)),
      window_ms_(std::max<int64_t>(1, window_ms)),
      floor_ms_(std::numeric_limits<int64_t>::min()) {}

void GoodputLedger::AddSpan(GoodputKind segment, int64_t begin_ms,
                            int64_t end_ms, int sign) {
  begin_ms = std::max(begin_ms, floor_ms_);
  while (begin_ms < end_ms) {
    const int64_t bucket = FloorTo(begin_ms, bucket_ms_);
    const int64_t until = std::min(end_ms, bucket + bucket_ms_);
    buckets_[bucket][segment] += sign * (until - begin_ms);
    begin_ms = until;
  }
}

void GoodputLedger::Add(const std::vector<GoodputInterval>& intervals,
                        int sign) {
  for (const GoodputInterval& interval : intervals) {
    AddSpan(interval.segment, interval.begin_ms, interval.end_ms, sign);
  }
}

GoodputTotals GoodputLedger::Window(int64_t now_ms) const {
  const int64_t start = now_ms - window_ms_;
  GoodputTotals totals;
  for (auto it = buckets_.upper_bound(start - bucket_ms_);
       it != buckets_.end() && it->first <= now_ms; ++it) {
    const int64_t bucket_end = it->first + bucket_ms_;
    if (it->first >= start) {
      totals += it->second;
      continue;
    }
    // Across the window's start: time is taken as spread evenly in it.
    const int64_t inside = bucket_end - start;
    for (size_t i = 0; i < kGoodputKinds; ++i) {
      totals.ms[i] += it->second.ms[i] * inside / bucket_ms_;
    }
  }
  return totals;
}

void GoodputLedger::Prune(int64_t now_ms) {
  const int64_t floor = FloorTo(now_ms - window_ms_, bucket_ms_);
  if (floor <= floor_ms_) return;
  floor_ms_ = floor;
  buckets_.erase(buckets_.begin(), buckets_.lower_bound(floor_ms_));
}

v1::GoodputLedgerRecord GoodputLedger::ToRecord() const {
  v1::GoodputLedgerRecord record;
  record.set_bucket_ms(bucket_ms_);
  for (const auto& [start, totals] : buckets_) {
    if (std::all_of(totals.ms.begin(), totals.ms.end(),
                    [](int64_t value) { return value == 0; })) {
      continue;
    }
    v1::GoodputLedgerRecord::Bucket* bucket = record.add_buckets();
    bucket->set_start_ms(start);
    *bucket->mutable_split() = ToProto(totals);
  }
  return record;
}

bool GoodputLedger::Restore(const v1::GoodputLedgerRecord& record) {
  if (record.bucket_ms() != bucket_ms_) return false;
  buckets_.clear();
  for (const v1::GoodputLedgerRecord::Bucket& bucket : record.buckets()) {
    if (bucket.start_ms() < floor_ms_) continue;
    buckets_[FloorTo(bucket.start_ms(), bucket_ms_)] +=
        FromProto(bucket.split());
  }
  return true;
}

void GoodputTracker::Update(uint64_t job_id,
                            std::vector<GoodputInterval> timeline) {
  std::vector<GoodputInterval>& counted = counted_[job_id];
  // The common beginning stays; of the first interval that differs only
  // in its end, the difference moves.
  size_t same = 0;
  while (same < counted.size() && same < timeline.size() &&
         counted[same] == timeline[same]) {
    ++same;
  }
  std::vector<GoodputInterval> removed(counted.begin() + same, counted.end());
  std::vector<GoodputInterval> added(timeline.begin() + same, timeline.end());
  if (!removed.empty() && !added.empty() &&
      removed.front().segment == added.front().segment &&
      removed.front().begin_ms == added.front().begin_ms) {
    const int64_t old_end = removed.front().end_ms;
    const int64_t new_end = added.front().end_ms;
    removed.erase(removed.begin());
    added.erase(added.begin());
    const GoodputKind segment = timeline[same].segment;
    if (new_end > old_end) {
      added.push_back({segment, old_end, new_end});
    } else {
      removed.push_back({segment, new_end, old_end});
    }
  }
  ledger_.Add(removed, -1);
  ledger_.Add(added, 1);
  counted = std::move(timeline);
}

std::vector<GoodputInterval> GoodputTracker::Remove(uint64_t job_id) {
  auto it = counted_.find(job_id);
  if (it == counted_.end()) return {};
  std::vector<GoodputInterval> intervals = std::move(it->second);
  counted_.erase(it);
  ledger_.Add(intervals, -1);
  return intervals;
}

}  // namespace gantry
