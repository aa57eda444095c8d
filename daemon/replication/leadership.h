// Leader election on an etcd lease. Every controller holds a lease of
// `ttl` seconds that it renews several times a TTL, and publishes its
// member record (name, address, applied log index, role) on it. The leader
// is the controller whose record sits on the leader key: created in a
// transaction that succeeds only when the key is absent, and gone when the
// leader's lease expires (its host died, it was paused, it lost etcd).
//
// The lease also fences the leader: Valid() is true only while the last
// successful renewal was sent less than a TTL ago (monotonic clock, which
// keeps counting while the process is stopped), so a leader resumed after
// a pause knows it may have been replaced before it acts on anything. The
// log's transactions compare the leader key's creation revision, so even a
// leader that believes itself valid cannot append once replaced.
//
// A renewal that goes unanswered does not end the leadership by itself:
// while etcd elects a new raft leader (one to two election timeouts, a
// second or two by default) nobody can renew, and etcd's new leader
// extends every lease when it takes office. So a leader whose lease lapsed
// locally stops acting (Valid() is false) but keeps renewing; it is lost
// only when etcd answers that the lease is gone, or when no renewal was
// answered for kEtcdElectionAllowance past the lapse. A renewal answered
// in time makes it valid again: its lease never expired in etcd, so its
// leader key is still its own.
//
// The records it writes (member, leader, successor) are sealed with the
// cluster key (record_seal.h), and the ones it reads are believed only if
// they open: a forged leader or successor record is refused (the alarm is
// raised) and deleted, so nobody is sent to the address it names and the
// election is not blocked by it.
//
// A leader may also hand over on purpose (HandOver, for gantry handover):
// in one transaction it names its successor in the successor key and
// deletes the leader key. While the successor key exists only the standby
// it names may take the leader key, and every standby's campaign watches
// both keys, so the named one takes office within a round trip or two.
//
// Threading: Campaign on one thread (it runs a watch thread of its own
// while it waits); the renewal thread started by the constructor;
// everything else from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/mutex.h"
#include "daemon/replication/etcd_client.h"
#include "daemon/replication/record_seal.h"
#include "daemon/replication/replication_keys.h"
#include "gantry/v1/replication.pb.h"

namespace gantry::replication {

// How long past a lapse of its lease a leader keeps trying to renew before
// it gives up: covers an etcd leader election (two election timeouts of
// etcd's default 1 s, and a round trip).
inline constexpr std::chrono::milliseconds kEtcdElectionAllowance{3000};

class Leadership {
 public:
  // Called with the leader's record whenever it changes (nullopt: none).
  using OnLeader =
      std::function<void(const std::optional<v1::ControllerMember>&)>;
  // Called once, from the renewal thread, when a leader's lease is lost.
  using OnLost = std::function<void(const std::string& reason)>;

  Leadership(EtcdClient& etcd, ReplicationKeys keys, RecordSeal& seal,
             v1::ControllerMember self, int64_t ttl_seconds, OnLost on_lost);
  ~Leadership();
  Leadership(const Leadership&) = delete;
  Leadership& operator=(const Leadership&) = delete;

  // Blocks until this controller is the leader (OK) or Stop (CANCELLED).
  // While it waits it follows the leader key and reports it to
  // `on_leader`; etcd errors are retried (logged, and reported to
  // `on_trouble`), never returned.
  absl::Status Campaign(
      const OnLeader& on_leader,
      const std::function<void(const std::string&)>& on_trouble);

  // Rounds the campaign has gone (each ends in a poll of etcd, answered
  // or not): a standby that is alive keeps counting.
  uint64_t campaign_rounds() const { return campaign_rounds_.load(); }
  // A round of waiting for etcd before the campaign (counted as one: the
  // standby is alive).
  void CountWaitingRound() { campaign_rounds_.fetch_add(1); }
  // The leader key's creation revision once leader (0 before).
  int64_t leader_revision() const { return leader_revision_.load(); }
  bool is_leader() const { return leader_revision_.load() != 0; }
  // A leader whose lease is surely still held (see above).
  bool Valid() const;
  // A leader that knows its lease is gone (on_lost has run or is running).
  bool lost() const { return lost_reported_.load(); }
  // The member record's applied index, published with the next renewal.
  void SetAppliedIndex(uint64_t index);
  uint64_t applied_index() const;
  const std::string& name() const { return name_; }
  // Hands leadership over: writes `record` (naming the successor) to the
  // successor key on lease `record_lease` and deletes the leader key, in
  // one transaction that holds only while this controller leads. OK: done,
  // and this controller no longer leads (is_leader false, its lease
  // revoked). FAILED_PRECONDITION: it was no longer the leader; nothing
  // written. UNAVAILABLE: etcd did not answer, and a read of the leader
  // key found it still this controller's (nothing changed) or could not
  // tell (the message says so).
  absl::Status HandOver(const v1::HandoverRecord& record, int64_t record_lease);
  // Ends the lease now (a clean stop), so a standby takes over at once.
  void Resign();
  // Makes Campaign return and stops renewing.
  void Stop();

 private:
  void RenewLoop();
  // After each renewal attempt: reports the loss of a leader's lease.
  void CheckLost(bool expired_in_etcd);
  // A leader whose key in etcd is gone or was created by another election
  // (a standby removed a tampered record and won) is no longer the
  // leader, though its lease lives on: it must not keep agents' streams.
  void CheckLeaderKeyIsOurs();
  // Whether `kv` (the leader or successor key, as read) holds a record
  // that does not open; if so, deletes it (if unchanged) so that it
  // neither blocks the election nor is believed.
  bool RemoveIfForged(const mvccpb::KeyValue& kv);
  absl::Status EnsureLease();
  absl::Status PublishMember();
  // One round of the campaign: true once this controller leads; on false,
  // `leader` is who leads (or the successor a hand-over named), if any.
  absl::StatusOr<bool> TryToLead(std::optional<v1::ControllerMember>& leader);
  // The second step for a standby the successor key names: takes the
  // leader key if the successor key is still at `successor_revision`.
  absl::StatusOr<bool> TakeOverAsSuccessor(int64_t successor_revision);
  etcdserverpb::PutRequest LeaderPut();
  // The leader key was created at `revision` for this controller.
  void TookOffice(int64_t revision);
  // Until Campaign returns: wakes it whenever the leader keys change.
  void WatchLeaderKeys();

  EtcdClient& etcd_;
  const ReplicationKeys keys_;
  RecordSeal& seal_;
  const int64_t ttl_seconds_;
  const OnLost on_lost_;
  const std::string name_;

  mutable Mutex mutex_;
  CondVar wake_;
  v1::ControllerMember self_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  int64_t lease_id_ ABSL_GUARDED_BY(mutex_) = 0;
  bool leader_keys_changed_ ABSL_GUARDED_BY(mutex_) = false;
  std::unique_ptr<EtcdWatch> leader_watch_ ABSL_GUARDED_BY(mutex_);
  bool campaigning_ ABSL_GUARDED_BY(mutex_) = false;

  std::atomic<int64_t> leader_revision_{0};
  std::atomic<uint64_t> campaign_rounds_{0};
  // steady_clock ticks until which the lease is surely held.
  std::atomic<int64_t> valid_until_{0};
  std::atomic<bool> lost_reported_{false};
  std::thread renewer_;  // last: starts once the rest is built
};

}  // namespace gantry::replication
