#include "daemon/replication/leadership.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/log.h"
#include "daemon/replication/controller_members.h"

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

}  // namespace

Leadership::Leadership(EtcdClient& etcd, ReplicationKeys keys, RecordSeal& seal,
                       v1::ControllerMember self, int64_t ttl_seconds,
                       OnLost on_lost)
    : etcd_(etcd),
      keys_(std::move(keys)),
      seal_(seal),
      ttl_seconds_(ttl_seconds),
      on_lost_(std::move(on_lost)),
      name_(self.name()),
      self_(std::move(self)),
      renewer_([this] { RenewLoop(); }) {}

Leadership::~Leadership() {
  Stop();
  renewer_.join();
}

void Leadership::Stop() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
    if (leader_watch_) leader_watch_->Cancel();
  }
  wake_.NotifyAll();
}

bool Leadership::Valid() const {
  return is_leader() && SteadyNow() < valid_until_.load();
}

void Leadership::SetAppliedIndex(uint64_t index) {
  MutexLock lock(mutex_);
  self_.set_applied_index(index);
}

uint64_t Leadership::applied_index() const {
  MutexLock lock(mutex_);
  return self_.applied_index();
}

absl::Status Leadership::EnsureLease() {
  {
    MutexLock lock(mutex_);
    if (lease_id_ != 0) return absl::OkStatus();
  }
  const int64_t sent = SteadyNow();
  absl::StatusOr<int64_t> lease = etcd_.GrantLease(ttl_seconds_);
  if (!lease.ok()) return lease.status();
  valid_until_.store(sent + SteadyTicks(std::chrono::seconds(ttl_seconds_)));
  MutexLock lock(mutex_);
  lease_id_ = *lease;
  return absl::OkStatus();
}

absl::Status Leadership::PublishMember() {
  etcdserverpb::PutRequest put;
  {
    MutexLock lock(mutex_);
    if (lease_id_ == 0) return absl::OkStatus();
    self_.set_updated_ms(RealClock().NowMs());
    // For `gantry status`: what this controller refused.
    self_.set_forged_records(seal_.forged_count());
    self_.set_last_forged_key(seal_.last_forged_key());
    put.set_key(keys_.member(self_.name()));
    put.set_value(SealMember(seal_, put.key(), self_));
    put.set_lease(lease_id_);
  }
  etcdserverpb::TxnRequest txn;
  *txn.add_success()->mutable_request_put() = put;
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_.Txn(txn);
  return response.status();
}

void Leadership::CheckLost(bool expired_in_etcd) {
  if (!is_leader() || Valid()) return;
  std::string reason;
  if (expired_in_etcd) {
    reason =
        "etcd says this controller's lease expired: another controller "
        "may lead now";
  } else if (SteadyNow() >=
             valid_until_.load() + SteadyTicks(kEtcdElectionAllowance)) {
    reason = absl::StrCat(
        "no renewal of the etcd lease was answered within "
        "its ",
        ttl_seconds_, " s and ", kEtcdElectionAllowance.count(),
        " ms more: another controller may lead now");
  } else {
    return;  // lapsed: acts on nothing, and keeps renewing
  }
  if (!lost_reported_.exchange(true)) on_lost_(reason);
}

void Leadership::CheckLeaderKeyIsOurs() {
  const int64_t revision = leader_revision_.load();
  if (revision == 0 || lost_reported_.load()) return;
  etcdserverpb::RangeRequest read;
  read.set_key(keys_.leader());
  read.set_keys_only(true);
  absl::StatusOr<etcdserverpb::RangeResponse> answer = etcd_.Range(read);
  if (!answer.ok()) return;  // etcd unreachable: the lease decides
  if (answer->kvs_size() == 1 && answer->kvs(0).create_revision() == revision) {
    return;
  }
  if (leader_revision_.load() != revision) return;  // handed over meanwhile
  if (!lost_reported_.exchange(true)) {
    on_lost_(
        "the leader key in etcd is no longer this controller's (deleted, "
        "or created by another election): another controller may lead now");
  }
}

void Leadership::RenewLoop() {
  // A few renewals per TTL, and at least two a second, so that one lost
  // to an etcd member going away leaves time for the next.
  const auto period = std::chrono::milliseconds(
      std::clamp<int64_t>(ttl_seconds_ * 1000 / 4, 200, 500));
  MutexLock lock(mutex_);
  while (!stopping_) {
    wake_.WaitFor(lock, period, [this] {
      mutex_.AssertHeld();
      return stopping_;
    });
    if (stopping_) break;
    const int64_t lease_id = lease_id_;
    lock.Unlock();
    // When etcd does not answer the renewal, the leader-key check and the
    // member record would each wait out the same call timeout, and a
    // leader cut from etcd would find its lease lost three timeouts a
    // round later instead of one: the renewal alone is tried again.
    bool etcd_answered = true;
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
      etcd_answered = ttl.ok();
      bool expired = false;
      if (ttl.ok() && *ttl > 0) {
        valid_until_.store(sent + SteadyTicks(std::chrono::seconds(*ttl)));
      } else if (ttl.ok()) {
        // Expired: a standby takes a new one; a leader has been replaced.
        MutexLock relock(mutex_);
        if (lease_id_ == lease_id) lease_id_ = 0;
        valid_until_.store(0);
        expired = true;
      } else {
        log::Warn("cannot renew the etcd lease; trying again",
                  {{"error", ttl.status().ToString()}});
      }
      CheckLost(expired);
      if (etcd_answered) CheckLeaderKeyIsOurs();
    }
    if (etcd_answered) {
      if (absl::Status published = PublishMember(); !published.ok()) {
        log::Debug("cannot publish this controller's member record",
                   {{"error", published.ToString()}});
      }
    }
    lock.Lock();
  }
}

etcdserverpb::PutRequest Leadership::LeaderPut() {
  MutexLock lock(mutex_);
  v1::ControllerMember leader = self_;
  leader.set_role("leader");
  leader.set_updated_ms(RealClock().NowMs());
  etcdserverpb::PutRequest put;
  put.set_key(keys_.leader());
  put.set_value(SealMember(seal_, keys_.leader(), leader));
  put.set_lease(lease_id_);
  return put;
}

absl::StatusOr<bool> Leadership::TryToLead(
    std::optional<v1::ControllerMember>& leader) {
  // The leader key is free, and no hand-over names a successor.
  etcdserverpb::TxnRequest txn;
  CompareCreated(txn, keys_.leader(), 0);
  CompareCreated(txn, keys_.successor(), 0);
  *txn.add_success()->mutable_request_put() = LeaderPut();
  txn.add_failure()->mutable_request_range()->set_key(keys_.leader());
  txn.add_failure()->mutable_request_range()->set_key(keys_.successor());
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_.Txn(txn);
  if (!response.ok()) return response.status();
  if (response->succeeded()) {
    TookOffice(response->header().revision());
    return true;
  }
  const auto& reads = response->responses();
  if (reads.size() != 2) return false;
  if (reads[0].response_range().kvs_size() == 1) {
    const mvccpb::KeyValue& kv = reads[0].response_range().kvs(0);
    if (RemoveIfForged(kv)) return false;
    absl::StatusOr<v1::ControllerMember> record = OpenMember(seal_, kv);
    if (record.ok()) leader = std::move(*record);
    return false;
  }
  // No leader, but a hand-over under way: only its successor may lead,
  // and it will in a moment.
  if (reads[1].response_range().kvs_size() == 1) {
    const mvccpb::KeyValue& kv = reads[1].response_range().kvs(0);
    if (RemoveIfForged(kv)) return false;
    absl::StatusOr<std::string> opened = seal_.Open(kv.key(), kv.value());
    v1::HandoverRecord record;
    if (!opened.ok() || !record.ParseFromString(*opened)) return false;
    if (record.successor() == name_) {
      return TakeOverAsSuccessor(kv.mod_revision());
    }
    leader.emplace();
    leader->set_name(record.successor());
    leader->set_address(record.successor_address());
    leader->set_role("successor");
  }
  return false;
}

bool Leadership::RemoveIfForged(const mvccpb::KeyValue& kv) {
  if (seal_.Open(kv.key(), kv.value()).ok()) return false;
  // No controller wrote it (the alarm is raised): a record nobody
  // believes. Deleted only if unchanged, so a real leader that took the
  // key meanwhile keeps it.
  etcdserverpb::TxnRequest txn;
  etcdserverpb::Compare* same = txn.add_compare();
  same->set_key(kv.key());
  same->set_target(etcdserverpb::Compare::MOD);
  same->set_result(etcdserverpb::Compare::EQUAL);
  same->set_mod_revision(kv.mod_revision());
  txn.add_success()->mutable_request_delete_range()->set_key(kv.key());
  absl::StatusOr<etcdserverpb::TxnResponse> deleted = etcd_.Txn(txn);
  if (deleted.ok() && deleted->succeeded()) {
    log::Warn("deleted a forged record from etcd", {{"key", kv.key()}});
  }
  return true;
}

absl::StatusOr<bool> Leadership::TakeOverAsSuccessor(
    int64_t successor_revision) {
  etcdserverpb::TxnRequest txn;
  CompareCreated(txn, keys_.leader(), 0);
  etcdserverpb::Compare* same = txn.add_compare();
  same->set_key(keys_.successor());
  same->set_target(etcdserverpb::Compare::MOD);
  same->set_result(etcdserverpb::Compare::EQUAL);
  same->set_mod_revision(successor_revision);
  *txn.add_success()->mutable_request_put() = LeaderPut();
  txn.add_success()->mutable_request_delete_range()->set_key(keys_.successor());
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_.Txn(txn);
  if (!response.ok()) return response.status();
  if (!response->succeeded()) return false;
  TookOffice(response->header().revision());
  log::Info("taking over as the successor a hand-over named");
  return true;
}

void Leadership::TookOffice(int64_t revision) {
  {
    MutexLock lock(mutex_);
    self_.set_role("leader");
  }
  leader_revision_.store(revision);
}

void Leadership::WatchLeaderKeys() {
  while (true) {
    EtcdWatch* watch;
    {
      MutexLock lock(mutex_);
      if (!campaigning_ || stopping_) return;
      // From the current revision: a change before it is found by the
      // campaign's own poll.
      leader_watch_ = etcd_.NewWatch(keys_.leader(), PrefixEnd(keys_.leader()),
                                     /*start_revision=*/0);
      watch = leader_watch_.get();
    }
    absl::Status ended = watch->Run([this](const etcdserverpb::WatchResponse&) {
      {
        MutexLock lock(mutex_);
        leader_keys_changed_ = true;
      }
      wake_.NotifyAll();
    });
    MutexLock lock(mutex_);
    leader_watch_.reset();
    if (!campaigning_ || stopping_) return;
    // Its etcd member went away: the campaign still polls meanwhile.
    log::Debug("the watch of the leader key ended; watching again",
               {{"error", ended.ToString()}});
    wake_.WaitFor(lock, std::chrono::milliseconds(500), [this] {
      mutex_.AssertHeld();
      return !campaigning_ || stopping_;
    });
  }
}

absl::Status Leadership::Campaign(
    const OnLeader& on_leader,
    const std::function<void(const std::string&)>& on_trouble) {
  {
    MutexLock lock(mutex_);
    campaigning_ = true;
  }
  std::thread watcher([this] { WatchLeaderKeys(); });
  struct StopWatching {
    Leadership* self;
    std::thread& watcher;
    ~StopWatching() {
      {
        MutexLock lock(self->mutex_);
        self->campaigning_ = false;
        if (self->leader_watch_) self->leader_watch_->Cancel();
      }
      self->wake_.NotifyAll();
      watcher.join();
    }
  } stop_watching{this, watcher};
  std::optional<std::string> last_seen;
  while (true) {
    {
      MutexLock lock(mutex_);
      if (stopping_) return absl::CancelledError("stopping");
    }
    absl::Status status = EnsureLease();
    std::optional<v1::ControllerMember> leader;
    if (status.ok()) {
      absl::StatusOr<bool> won = TryToLead(leader);
      if (won.ok() && *won) {
        PublishMember().IgnoreError();  // the renewal thread retries it
        return absl::OkStatus();
      }
      status = won.status();
    }
    if (status.ok()) {
      // Someone else leads (or is about to): for clients that ask us.
      const std::string seen = leader ? leader->SerializeAsString() : "";
      if (seen != last_seen) {
        last_seen = seen;
        on_leader(leader);
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
    campaign_rounds_.fetch_add(1);
    // A change of the leader keys (a leader gone, a hand-over) wakes this
    // at once; the poll covers a watch that is down.
    MutexLock lock(mutex_);
    wake_.WaitFor(lock, std::chrono::milliseconds(200), [this] {
      mutex_.AssertHeld();
      return stopping_ || leader_keys_changed_;
    });
    leader_keys_changed_ = false;
  }
}

absl::Status Leadership::HandOver(const v1::HandoverRecord& record,
                                  int64_t record_lease) {
  const int64_t revision = leader_revision_.load();
  if (revision == 0) {
    return absl::FailedPreconditionError("this controller does not lead");
  }
  etcdserverpb::TxnRequest txn;
  CompareCreated(txn, keys_.leader(), revision);
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(keys_.successor());
  put->set_value(seal_.Seal(keys_.successor(), record.SerializeAsString()));
  put->set_lease(record_lease);
  txn.add_success()->mutable_request_delete_range()->set_key(keys_.leader());
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_.Txn(txn);
  if (!response.ok()) {
    // The transaction may or may not have been applied: read which.
    etcdserverpb::RangeRequest read;
    read.set_key(keys_.leader());
    absl::StatusOr<etcdserverpb::RangeResponse> leader = etcd_.Range(read);
    if (!leader.ok()) {
      return absl::UnavailableError(absl::StrCat(
          "etcd did not answer (", response.status().message(),
          "): the hand-over may or may not have happened; gantry status "
          "shows which controller leads"));
    }
    if (leader->kvs_size() == 1 &&
        leader->kvs(0).create_revision() == revision) {
      return absl::UnavailableError(
          absl::StrCat("etcd did not answer the hand-over (",
                       response.status().message(), "); nothing changed"));
    }
    if (leader->kvs_size() == 1) {
      return absl::FailedPreconditionError(
          "this controller no longer leads: another took the leader key");
    }
    // The leader key is gone: the transaction was applied.
  } else if (!response->succeeded()) {
    return absl::FailedPreconditionError(
        "this controller no longer leads: another took the leader key");
  }
  {
    MutexLock lock(mutex_);
    self_.set_role("standby");
  }
  Resign();
  return absl::OkStatus();
}

void Leadership::Resign() {
  int64_t lease_id;
  {
    MutexLock lock(mutex_);
    lease_id = lease_id_;
    lease_id_ = 0;
  }
  leader_revision_.store(0);
  if (lease_id != 0) etcd_.RevokeLease(lease_id).IgnoreError();
}

}  // namespace gantry::replication
