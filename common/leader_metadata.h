// The gRPC trailing metadata key in which a standby gantryd names the
// leading controller's HOST:PORT (daemon/replication/standby_service.h),
// so the CLI and agents redial the leader at once.
#pragma once

namespace gantry {

inline constexpr char kLeaderMetadataKey[] = "gantry-leader";

}  // namespace gantry
