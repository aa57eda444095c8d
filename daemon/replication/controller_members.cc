#include "daemon/replication/controller_members.h"

namespace gantry::replication {

absl::StatusOr<std::vector<v1::ControllerMember>> ReadControllerMembers(
    EtcdClient& etcd, const ReplicationKeys& keys) {
  etcdserverpb::RangeRequest request;
  request.set_key(keys.members());
  request.set_range_end(PrefixEnd(keys.members()));
  absl::StatusOr<etcdserverpb::RangeResponse> response = etcd.Range(request);
  if (!response.ok()) return response.status();
  std::vector<v1::ControllerMember> members;
  for (const mvccpb::KeyValue& kv : response->kvs()) {
    v1::ControllerMember member;
    if (member.ParseFromString(kv.value())) members.push_back(member);
  }
  return members;
}

}  // namespace gantry::replication
