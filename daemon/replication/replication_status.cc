#include "daemon/replication/replication_status.h"

namespace gantry::replication {

v1::ReplicationStatus ReplicationStatusSource::Get() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (cached_.enabled() && now - cached_at_ < std::chrono::seconds(1)) {
    return cached_;
  }
  cached_ = Read();
  cached_at_ = now;
  return cached_;
}

v1::ReplicationStatus ReplicationStatusSource::Read() {
  v1::ReplicationStatus status;
  status.set_enabled(true);
  status.set_leader(controller_.options().name);
  status.set_last_index(controller_.last_index());
  status.set_prefix(controller_.keys().prefix());
  etcdserverpb::RangeRequest request;
  request.set_key(controller_.keys().members());
  request.set_range_end(PrefixEnd(controller_.keys().members()));
  absl::StatusOr<etcdserverpb::RangeResponse> members =
      controller_.etcd().Range(request);
  if (members.ok()) {
    for (const mvccpb::KeyValue& kv : members->kvs()) {
      v1::ControllerMember member;
      if (member.ParseFromString(kv.value())) {
        *status.add_controllers() = std::move(member);
      }
    }
  }
  for (const EtcdMemberHealth& health : controller_.etcd().Health()) {
    v1::EtcdMemberStatus* member = status.add_etcd();
    member->set_endpoint(health.endpoint);
    member->set_reachable(health.reachable);
    member->set_leader(health.is_leader);
    member->set_error(health.error);
    member->set_db_size_bytes(health.db_size_bytes);
  }
  return status;
}

}  // namespace gantry::replication
