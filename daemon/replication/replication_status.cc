#include "daemon/replication/replication_status.h"

#include "daemon/replication/controller_members.h"

namespace gantry::replication {

v1::ReplicationStatus ReplicationStatusSource::Get() {
  MutexLock lock(mutex_);
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
  absl::StatusOr<std::vector<v1::ControllerMember>> members =
      ReadControllerMembers(controller_.etcd(), controller_.keys(),
                            controller_.seal());
  if (members.ok()) {
    for (v1::ControllerMember& member : *members) {
      *status.add_controllers() = std::move(member);
    }
  }
  status.set_truncated_through(controller_.truncated_through());
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
