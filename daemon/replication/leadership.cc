#include "daemon/replication/leadership.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace gantry::replication {
namespace {

int64_t SteadyNow() {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}

int64_t SteadyTicks(std::chrono::milliseconds duration) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             duration)
      .count();
}

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Leadership::Leadership(EtcdClient& etcd, ReplicationKeys keys,
                       v1::ControllerMember self, int64_t ttl_seconds,
                       OnLost on_lost)
    : etcd_(etcd),
      keys_(std::move(keys)),
      ttl_seconds_(ttl_seconds),
      on_lost_(std::move(on_lost)),
      self_(std::move(self)),
      renewer_([this] { RenewLoop(); }) {}

Leadership::~Leadership() {
  Stop();
  renewer_.join();
}

void Leadership::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

bool Leadership::Valid() const {
  return is_leader() && SteadyNow() < valid_until_.load();
}

void Leadership::SetAppliedIndex(uint64_t index) {
  std::lock_guard lock(mutex_);
  self_.set_applied_index(index);
}

absl::Status Leadership::EnsureLease() {
  {
    std::lock_guard lock(mutex_);
    if (lease_id_ != 0) return absl::OkStatus();
  }
  const int64_t sent = SteadyNow();
  absl::StatusOr<int64_t> lease = etcd_.GrantLease(ttl_seconds_);
  if (!lease.ok()) return lease.status();
  valid_until_.store(sent + SteadyTicks(std::chrono::seconds(ttl_seconds_)));
  std::lock_guard lock(mutex_);
  lease_id_ = *lease;
  return absl::OkStatus();
}

absl::Status Leadership::PublishMember() {
  etcdserverpb::PutRequest put;
  {
    std::lock_guard lock(mutex_);
    if (lease_id_ == 0) return absl::OkStatus();
    self_.set_updated_ms(WallMs());
    put.set_key(keys_.member(self_.name()));
    put.set_value(self_.SerializeAsString());
    put.set_lease(lease_id_);
  }
  etcdserverpb::TxnRequest txn;
  *txn.add_success()->mutable_request_put() = put;
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_.Txn(txn);
  return response.status();
}

void Leadership::RenewLoop() {
  const auto period = std::chrono::milliseconds(
      std::max<int64_t>(ttl_seconds_ * 1000 / 4, 200));
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, period, [this] { return stopping_; });
    if (stopping_) break;
    const int64_t lease_id = lease_id_;
    lock.unlock();
    if (lease_id == 0) {
      if (!is_leader()) {
        if (absl::Status granted = EnsureLease(); !granted.ok()) {
          log::Warn("cannot get an etcd lease; retrying",
                    {{"error", granted.ToString()}});
        }
      }
    } else {
      const int64_t sent = SteadyNow();
      absl::StatusOr<int64_t> ttl = etcd_.KeepAliveOnce(lease_id);
      if (ttl.ok() && *ttl > 0) {
        valid_until_.store(sent + SteadyTicks(std::chrono::seconds(*ttl)));
      } else if (ttl.ok()) {
        // Expired: a standby takes a new one; a leader has been replaced.
        std::lock_guard relock(mutex_);
        if (lease_id_ == lease_id) lease_id_ = 0;
        valid_until_.store(0);
      } else {
        log::Warn("cannot renew the etcd lease",
                  {{"error", ttl.status().ToString()}});
      }
    }
    if (is_leader() && !Valid() && !lost_reported_.exchange(true)) {
      on_lost_(absl::StrCat("the etcd lease was not renewed within its ",
                            ttl_seconds_,
                            " s: another controller may lead now"));
    }
    if (absl::Status published = PublishMember(); !published.ok()) {
      log::Debug("cannot publish this controller's member record",
                 {{"error", published.ToString()}});
    }
    lock.lock();
  }
}

absl::StatusOr<bool> Leadership::TryToLead() {
  etcdserverpb::TxnRequest txn;
  etcdserverpb::Compare* absent = txn.add_compare();
  absent->set_key(keys_.leader());
  absent->set_target(etcdserverpb::Compare::CREATE);
  absent->set_result(etcdserverpb::Compare::EQUAL);
  absent->set_create_revision(0);
  {
    std::lock_guard lock(mutex_);
    v1::ControllerMember leader = self_;
    leader.set_role("leader");
    leader.set_updated_ms(WallMs());
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(keys_.leader());
    put->set_value(leader.SerializeAsString());
    put->set_lease(lease_id_);
  }
  txn.add_failure()->mutable_request_range()->set_key(keys_.leader());
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_.Txn(txn);
  if (!response.ok()) return response.status();
  if (response->succeeded()) {
    {
      std::lock_guard lock(mutex_);
      self_.set_role("leader");
    }
    leader_revision_.store(response->header().revision());
    return true;
  }
  return false;
}

absl::Status Leadership::Campaign(
    const OnLeader& on_leader,
    const std::function<void(const std::string&)>& on_trouble) {
  std::optional<std::string> last_seen;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      if (stopping_) return absl::CancelledError("stopping");
    }
    absl::Status status = EnsureLease();
    if (status.ok()) {
      absl::StatusOr<bool> won = TryToLead();
      if (won.ok() && *won) {
        PublishMember().IgnoreError();  // the renewal thread retries it
        return absl::OkStatus();
      }
      status = won.status();
    }
    if (status.ok()) {
      // Someone else leads: read who, for clients that ask us.
      etcdserverpb::RangeRequest request;
      request.set_key(keys_.leader());
      absl::StatusOr<etcdserverpb::RangeResponse> leader = etcd_.Range(request);
      std::optional<v1::ControllerMember> record;
      if (leader.ok() && leader->kvs_size() == 1) {
        record.emplace();
        if (!record->ParseFromString(leader->kvs(0).value())) record.reset();
      }
      const std::string seen = record ? record->SerializeAsString() : "";
      if (leader.ok() && seen != last_seen) {
        last_seen = seen;
        on_leader(record);
      }
    } else {
      log::Warn("cannot campaign for leadership in etcd; retrying",
                {{"error", status.ToString()}});
      on_trouble(std::string(status.message()));
      if (last_seen != "") {
        last_seen = "";
        on_leader(std::nullopt);
      }
    }
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, std::chrono::milliseconds(200),
                   [this] { return stopping_; });
  }
}

void Leadership::Resign() {
  int64_t lease_id;
  {
    std::lock_guard lock(mutex_);
    lease_id = lease_id_;
    lease_id_ = 0;
  }
  leader_revision_.store(0);
  if (lease_id != 0) etcd_.RevokeLease(lease_id).IgnoreError();
}

}  // namespace gantry::replication
