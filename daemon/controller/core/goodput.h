// Goodput accounting: a job's wall time, from submission to its end (or
// now), cut into what it went to, from the times in its JobRecord and
// AttemptRecords. Pure functions of their arguments (no clock, no I/O);
// thread-safe (no state).
//
// The segments, of the kinds in common/goodput_kinds.h that gantryd
// measures, in the order an attempt goes through them:
//   queued      submission to the first launch; and the wait before an
//               attempt that follows one which did not fail (scontrol
//               requeue). Not in the ETTR's denominator: it measures the
//               cluster's load, not what failures cost the job.
//   preflight   the gang check before the ranks start
//               (AttemptRecord.preflight_start_ms..preflight_end_ms),
//               wherever it falls.
//   starting    launch to the attempt's first progress report or
//               checkpoint (first_progress_ms). A job that never reports
//               progress (no checkpoint dir, no hang timeout, no report in
//               any attempt) is counted productive from its ranks running.
//   productive  first progress to the end of an attempt that did not
//               fail; of one that failed, first progress to its last
//               checkpoint (last_checkpoint_ms).
//   lost        of an attempt that failed: the work since its last
//               checkpoint (or since its first progress when it wrote
//               none) up to the fault (fault_time_ms), thrown away. A
//               checkpoint its ranks saved while stopping after the fault
//               counts as taken at the fault: nothing lost.
//   detecting   the fault happened (fault_time_ms: a silent node's last
//               message, a hung job's last progress, a rank's exit) to the
//               controller acting on it (end_time_ms).
//   recovering  after a failure: the attempt ended, to every rank of the
//               next one running (ranks_running_ms), the wait for nodes and
//               the restart backoff included; or to the job's end.
//
// Boundaries that arrive out of order (a checkpoint reported after the
// fault that ends the attempt, clocks a millisecond apart) shorten the
// later segment instead of overlapping it: the segments always add up to
// the wall time exactly.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "common/goodput_kinds.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

struct GoodputInterval {
  GoodputKind segment;
  int64_t begin_ms;
  int64_t end_ms;  // > begin_ms

  bool operator==(const GoodputInterval&) const = default;
};

// Milliseconds per kind (the model's own kinds stay 0 here).
struct GoodputTotals {
  std::array<int64_t, kGoodputKinds> ms{};

  int64_t& operator[](GoodputKind segment) {
    return ms[static_cast<size_t>(segment)];
  }
  int64_t operator[](GoodputKind segment) const {
    return ms[static_cast<size_t>(segment)];
  }
  int64_t Total() const;
  // Productive over the wall time without the queued time (the effective
  // training time ratio); 0 when nothing but queueing happened.
  double Ettr() const;
  GoodputTotals& operator+=(const GoodputTotals& other);
};

// Whether an attempt ended by a failure: it has a fault time, or (records
// from before fault times were kept) ended with a failure's reason.
bool AttemptEndedByFailure(const v1::AttemptRecord& attempt);

// The job's timeline from submit_time_ms to its end_time_ms (now_ms while
// it has not ended), in time order, each interval starting where the one
// before ended, adjacent intervals of one segment merged. Empty for a job
// with no submission time.
std::vector<GoodputInterval> GoodputTimeline(const v1::JobRecord& job,
                                             int64_t now_ms);

// The intervals' milliseconds per segment, counting only what lies in
// [from_ms, to_ms).
GoodputTotals SumTimeline(const std::vector<GoodputInterval>& timeline,
                          int64_t from_ms = std::numeric_limits<int64_t>::min(),
                          int64_t to_ms = std::numeric_limits<int64_t>::max());

v1::GoodputSplit ToProto(const GoodputTotals& totals);
GoodputTotals FromProto(const v1::GoodputSplit& split);

}  // namespace gantry
