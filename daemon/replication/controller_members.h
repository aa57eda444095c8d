// The records controllers keep about themselves in etcd: each one's
// member record (PREFIX members/, each on its controller's lease, so a
// dead controller's record goes with its lease) and the leader's on the
// leader key. Both are sealed (record_seal.h) with their etcd key as
// associated data: a record someone else wrote, or one moved from another
// key, is refused (and raises the alarm), never believed.
//
// Thread-safe if the EtcdClient is (it is).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "daemon/replication/etcd_client.h"
#include "daemon/replication/record_seal.h"
#include "daemon/replication/replication_keys.h"
#include "gantry/v1/replication.pb.h"

namespace gantry::replication {

// The value to store `member` under etcd key `key`.
std::string SealMember(const RecordSeal& seal, const std::string& key,
                       const v1::ControllerMember& member);
// The record in `kv`. Errors: IsForged when it does not open; DATA_LOSS
// when it opens but does not parse.
absl::StatusOr<v1::ControllerMember> OpenMember(RecordSeal& seal,
                                                const mvccpb::KeyValue& kv);

// Records that do not open or parse are left out. Errors: those of
// EtcdClient.
absl::StatusOr<std::vector<v1::ControllerMember>> ReadControllerMembers(
    EtcdClient& etcd, const ReplicationKeys& keys, RecordSeal& seal);

}  // namespace gantry::replication
