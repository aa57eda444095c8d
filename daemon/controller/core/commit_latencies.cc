#include "daemon/controller/core/commit_latencies.h"

#include <algorithm>

namespace gantry {

CommitLatencies::CommitLatencies(size_t capacity)
    : capacity_(std::max<size_t>(1, capacity)) {
  samples_.reserve(capacity_);
}

void CommitLatencies::Add(double seconds) {
  last_ = seconds;
  if (samples_.size() < capacity_) {
    samples_.push_back(seconds);
    return;
  }
  samples_[next_] = seconds;
  next_ = (next_ + 1) % capacity_;
}

double CommitLatencies::Median() const {
  if (samples_.empty()) return 0;
  std::vector<double> sorted = samples_;
  const size_t middle = sorted.size() / 2;
  std::nth_element(sorted.begin(), sorted.begin() + middle, sorted.end());
  const double upper = sorted[middle];
  if (sorted.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(sorted.begin(), sorted.begin() + middle);
  return (lower + upper) / 2;
}

}  // namespace gantry
