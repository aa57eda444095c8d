// The recent history of GPU utilization (allocated GPUs / all GPUs) for
// `gantry status`: samples taken every few seconds are folded into buckets
// (a minute each by default) kept in a ring (an hour by default), so the
// memory is fixed however long the controller runs. In memory only: a
// restarted controller starts a new history.
//
// Not thread-safe: the controller's loop thread owns it. Time comes in as
// arguments, so tests drive it without a clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace gantry {

class UtilizationHistory {
 public:
  struct Point {
    int64_t start_ms = 0;
    // Mean of allocated / total over the bucket's samples, each sample
    // weighted by its GPU count (a sample with no GPUs weighs nothing).
    double allocated_share = 0;
  };

  // `bucket_ms` > 0, `buckets` > 0.
  explicit UtilizationHistory(int64_t bucket_ms = 60'000, size_t buckets = 60);

  // One sample at `now_ms` (not earlier than the last sample's). Starts a
  // new bucket when `now_ms` is past the current one; buckets with no
  // sample (the controller was stalled or stopped) are left out.
  void Record(int64_t now_ms, uint32_t gpus_total, uint32_t gpus_allocated);

  // Buckets with at least one GPU sample that started within the last
  // `buckets` bucket lengths before `now_ms`, oldest first; the last may be
  // the one still filling.
  std::vector<Point> Series(int64_t now_ms) const;
  // The GPU-weighted mean over Series(now_ms); 0 when it is empty.
  double Mean(int64_t now_ms) const;

  int64_t bucket_ms() const { return bucket_ms_; }

 private:
  struct Bucket {
    int64_t start_ms = 0;
    uint64_t gpu_samples = 0;  // sum of gpus_total over samples
    uint64_t allocated_samples = 0;
  };
  bool InWindow(const Bucket& bucket, int64_t now_ms) const;

  int64_t bucket_ms_;
  size_t capacity_;
  std::deque<Bucket> buckets_;  // oldest first, at most capacity_
};

}  // namespace gantry
