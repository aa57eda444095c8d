// The member records of the controllers alive in etcd (PREFIX members/,
// each on its controller's lease, so a dead controller's record goes with
// its lease).
//
// Thread-safe if the EtcdClient is (it is).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "daemon/replication/etcd_client.h"
#include "daemon/replication/replication_keys.h"
#include "gantry/v1/replication.pb.h"

namespace gantry::replication {

// Records that do not parse are left out. Errors: those of EtcdClient.
absl::StatusOr<std::vector<v1::ControllerMember>> ReadControllerMembers(
    EtcdClient& etcd, const ReplicationKeys& keys);

}  // namespace gantry::replication
