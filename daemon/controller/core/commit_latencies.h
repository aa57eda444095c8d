// The durations of the controller's recent group commits (the synced
// RocksDB write), for `gantry status`: the latest and the median of the
// last few hundred. Prometheus keeps the histogram; this keeps what one
// screen needs without a metrics server.
//
// Not thread-safe: the controller's loop thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gantry {

class CommitLatencies {
 public:
  // Keeps the last `capacity` (> 0) durations.
  explicit CommitLatencies(size_t capacity = 256);

  void Add(double seconds);

  size_t count() const { return samples_.size(); }
  // 0 when nothing was added.
  double last() const { return last_; }
  // The median of the kept durations (the mean of the middle two for an
  // even count); 0 when nothing was added.
  double Median() const;

 private:
  size_t capacity_;
  std::vector<double> samples_;  // a ring once full
  size_t next_ = 0;              // where the next one goes once full
  double last_ = 0;
};

}  // namespace gantry
