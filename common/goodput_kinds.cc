#include "common/goodput_kinds.h"

namespace gantry {

std::string_view GoodputKindName(GoodputKind kind) {
  switch (kind) {
    case GoodputKind::kQueued:
      return "queued";
    case GoodputKind::kPreflight:
      return "preflight";
    case GoodputKind::kStarting:
      return "starting";
    case GoodputKind::kProductive:
      return "productive";
    case GoodputKind::kLost:
      return "lost";
    case GoodputKind::kDetecting:
      return "detecting";
    case GoodputKind::kRecovering:
      return "recovering";
    case GoodputKind::kDegraded:
      return "degraded";
    case GoodputKind::kCheckpoint:
      return "checkpoint";
  }
  return "unknown";
}

}  // namespace gantry
