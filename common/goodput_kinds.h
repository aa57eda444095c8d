// What a training job's wall time goes to: the one list of kinds that
// gantryd measures (daemon/controller/goodput.h, from each job's records)
// and gantry-sim models (daemon/simulator/goodput_attempt.h), so the two
// cannot name or count them differently. What each kind covers is defined
// with the measurement, in goodput.h.
//
// The first kMeasuredGoodputKinds are the ones gantryd tells apart. The
// last two exist in the model only: gantryd sees a running rank's time as
// productive whether the job runs shrunk (degraded) or writes a checkpoint
// (its ranks report no such pause), so a comparison of the two adds them
// to productive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gantry {

enum class GoodputKind : uint8_t {
  kQueued,
  kPreflight,
  kStarting,
  kProductive,
  kLost,
  kDetecting,
  kRecovering,
  // The model's only.
  kDegraded,    // running shrunk: the share of the time the job is missing
  kCheckpoint,  // periodic checkpoint and snapshot writes
};
inline constexpr size_t kGoodputKinds = 9;
inline constexpr size_t kMeasuredGoodputKinds = 7;

// "queued", "preflight", "starting", "productive", "lost", "detecting",
// "recovering", "degraded", "checkpoint": metric labels and JSON keys.
std::string_view GoodputKindName(GoodputKind kind);

}  // namespace gantry
