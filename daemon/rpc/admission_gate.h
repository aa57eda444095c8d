// Back-pressure for submissions: at most `limit` of them between arrival
// and their durable reply. Past that gantryd answers "busy, retry"
// (RESOURCE_EXHAUSTED) at once instead of queueing without bound, and the
// CLI retries with backoff. Thread-safe (gRPC threads enter, the loop
// leaves).
#pragma once

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/request_limits.h"

namespace gantry {

class AdmissionGate {
 public:
  explicit AdmissionGate(uint32_t limit) : limit_(limit) {}

  // True when admitted; the caller must Leave() once the request is done.
  bool TryEnter() {
    uint32_t current = in_flight_.load(std::memory_order_relaxed);
    while (current < limit_) {
      if (in_flight_.compare_exchange_weak(current, current + 1,
                                           std::memory_order_acq_rel)) {
        return true;
      }
    }
    return false;
  }
  void Leave() { in_flight_.fetch_sub(1, std::memory_order_acq_rel); }
  uint32_t in_flight() const {
    return in_flight_.load(std::memory_order_relaxed);
  }
  uint32_t limit() const { return limit_; }
  // The answer to a submission TryEnter refused.
  absl::Status Busy() const {
    return absl::ResourceExhaustedError(
        absl::StrCat(limits::kBusyMessagePrefix, ": ", limit_,
                     " submissions are waiting to be stored; retry shortly"));
  }

 private:
  const uint32_t limit_;
  std::atomic<uint32_t> in_flight_{0};
};

}  // namespace gantry
