#include "daemon/controller/core/utilization_history.h"

#include <algorithm>

namespace gantry {

UtilizationHistory::UtilizationHistory(int64_t bucket_ms, size_t buckets)
    : bucket_ms_(std::max<int64_t>(1, bucket_ms)),
      capacity_(std::max<size_t>(1, buckets)) {}

void UtilizationHistory::Record(int64_t now_ms, uint32_t gpus_total,
                                uint32_t gpus_allocated) {
  // Buckets are aligned to multiples of their length, so the series lines
  // up with wall-clock minutes.
  const int64_t start =
      now_ms - (((now_ms % bucket_ms_) + bucket_ms_) % bucket_ms_);
  if (buckets_.empty() || buckets_.back().start_ms < start) {
    buckets_.push_back(Bucket{start, 0, 0});
    if (buckets_.size() > capacity_) buckets_.pop_front();
  }
  Bucket& bucket = buckets_.back();
  bucket.gpu_samples += gpus_total;
  bucket.allocated_samples += std::min(gpus_allocated, gpus_total);
}

bool UtilizationHistory::InWindow(const Bucket& bucket, int64_t now_ms) const {
  return bucket.gpu_samples > 0 &&
         bucket.start_ms >
             now_ms - static_cast<int64_t>(capacity_) * bucket_ms_;
}

std::vector<UtilizationHistory::Point> UtilizationHistory::Series(
    int64_t now_ms) const {
  std::vector<Point> series;
  for (const Bucket& bucket : buckets_) {
    if (!InWindow(bucket, now_ms)) continue;
    series.push_back(
        Point{bucket.start_ms, static_cast<double>(bucket.allocated_samples) /
                                   static_cast<double>(bucket.gpu_samples)});
  }
  return series;
}

double UtilizationHistory::Mean(int64_t now_ms) const {
  uint64_t gpus = 0, allocated = 0;
  for (const Bucket& bucket : buckets_) {
    if (!InWindow(bucket, now_ms)) continue;
    gpus += bucket.gpu_samples;
    allocated += bucket.allocated_samples;
  }
  return gpus == 0 ? 0.0
                   : static_cast<double>(allocated) / static_cast<double>(gpus);
}

}  // namespace gantry
