// A small synchronous client of etcd's v3 gRPC API: the calls a replicated
// controller needs (KV ranges and transactions, leases, watches, member
// health), over the stubs compiled from Debian's etcd .proto files
// (proto/etcd).
//
// Several endpoints (the members of one etcd cluster) are dialled lazily,
// one channel each; a call that finds its member unreachable or without a
// raft leader moves on to the next member, so one member down changes
// nothing. Every call has a deadline: etcd without a quorum answers
// nothing, and callers must learn that in bounded time.
//
// The members must be one etcd cluster: CheckOneCluster asks each its
// cluster id at start (two clusters given as one would each elect a
// leader: split brain). Every answer's header carries the id too; a member
// that answers for another cluster later (reinstalled, replaced, a wrong
// address) is an alarm (logged, ForeignMembers for the metrics and `gantry
// status`), and its answers are not acted on: the call moves on to
// another member as if it were unreachable.
//
// Thread-safe: calls may come from any thread at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "daemon/replication/etcd_transport.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace gantry::replication {

// One member's view, for `gantry status`.
struct EtcdMemberHealth {
  std::string endpoint;
  bool reachable = false;
  bool is_leader = false;
  uint64_t raft_term = 0;
  int64_t db_size_bytes = 0;
  // Why it is not reachable; "ALARM: ..." when it answers for another
  // etcd cluster than the one checked.
  std::string error;
};

// An endpoint that answered for another etcd cluster than the one checked.
struct ForeignEtcdMember {
  std::string endpoint;
  uint64_t cluster_id = 0;
};

class EtcdWatch;

class EtcdClient {
 public:
  // `endpoints`: HOST:PORT of each member (an http:// or https:// prefix
  // is accepted and dropped, as etcdctl writes them; `transport` says
  // whether TLS is spoken, etcd_transport.h). Errors: INVALID_ARGUMENT for
  // an empty list or an endpoint that is not HOST:PORT.
  static absl::StatusOr<std::unique_ptr<EtcdClient>> Create(
      const std::vector<std::string>& endpoints,
      std::chrono::milliseconds call_timeout, EtcdTransport transport = {});

  // Asks every member its cluster id and remembers it. Errors:
  // FAILED_PRECONDITION naming each endpoint and its id when the members
  // that answer are not one cluster. Members that do not answer now are
  // checked when they do (as is the id itself, when none answers).
  absl::Status CheckOneCluster();
  // The cluster id checked (0: not known yet).
  uint64_t cluster_id() const { return cluster_id_.load(); }
  // Members whose last answer came from another cluster (the alarm).
  std::vector<ForeignEtcdMember> ForeignMembers() const;

  // Errors of every call: UNAVAILABLE "etcd has no quorum" style messages
  // naming the endpoints tried and the last error, when no member answered
  // within the timeout; other gRPC errors as their absl codes.
  absl::StatusOr<etcdserverpb::RangeResponse> Range(
      const etcdserverpb::RangeRequest& request);
  absl::StatusOr<etcdserverpb::TxnResponse> Txn(
      const etcdserverpb::TxnRequest& request);
  absl::StatusOr<etcdserverpb::DeleteRangeResponse> DeleteRange(
      const etcdserverpb::DeleteRangeRequest& request);
  absl::Status Compact(int64_t revision);

  // A lease of `ttl_seconds`; returns its id.
  absl::StatusOr<int64_t> GrantLease(int64_t ttl_seconds);
  // Renews the lease once; returns the TTL etcd granted (0: the lease has
  // expired or was revoked).
  absl::StatusOr<int64_t> KeepAliveOnce(int64_t lease_id);
  absl::Status RevokeLease(int64_t lease_id);

  // Each member's status, asked of each one directly.
  std::vector<EtcdMemberHealth> Health();

  // A watch of [key, range_end) from `start_revision` (see EtcdWatch).
  std::unique_ptr<EtcdWatch> NewWatch(std::string key, std::string range_end,
                                      int64_t start_revision);

  const std::vector<std::string>& endpoints() const { return endpoints_; }

 private:
  friend class EtcdWatch;
  struct Member {
    std::string endpoint;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Lease::Stub> lease;
    std::unique_ptr<etcdserverpb::Watch::Stub> watch;
    std::unique_ptr<etcdserverpb::Maintenance::Stub> maintenance;
  };

  EtcdClient(std::vector<std::string> endpoints,
             std::chrono::milliseconds call_timeout, EtcdTransport transport);
  // Runs `call` against the preferred member, then the others, until one
  // answers with anything but "unreachable" or the deadline passes; an
  // answer whose header (`answered_cluster`, read after the call) names
  // another cluster counts as no answer.
  absl::Status Call(
      const char* what,
      const std::function<grpc::Status(Member&, grpc::ClientContext&)>& call,
      const std::function<uint64_t()>& answered_cluster);
  // The member's own status (Maintenance.Status), asked of it alone.
  grpc::Status AskStatus(Member& member,
                         etcdserverpb::StatusResponse& response);
  // Whether `member` answering for `cluster_id` may be believed; raises
  // or clears the member's alarm. The first id seen is the cluster's when
  // CheckOneCluster found none.
  bool FromOurCluster(const Member& member, uint64_t cluster_id);
  // Why a member's answer was not believed, for messages.
  std::string ForeignMessage(const std::string& endpoint,
                             uint64_t cluster_id) const;

  const std::vector<std::string> endpoints_;
  const std::chrono::milliseconds call_timeout_;
  const EtcdTransport transport_;
  std::vector<Member> members_;
  std::atomic<size_t> preferred_{0};
  std::atomic<uint64_t> cluster_id_{0};
  mutable Mutex foreign_mutex_;
  // endpoint -> the other cluster's id
  std::map<std::string, uint64_t> foreign_ ABSL_GUARDED_BY(foreign_mutex_);
};

// A watch stream. Run blocks, handing each batch of events to the callback
// in revision order, until Cancel (from any thread: returns OK) or an
// error (the member went away, the start revision was compacted:
// OUT_OF_RANGE). Callers restart a failed watch from the revision after
// the last one they saw.
class EtcdWatch {
 public:
  using OnEvents = std::function<void(const etcdserverpb::WatchResponse&)>;
  absl::Status Run(const OnEvents& on_events);
  void Cancel();

 private:
  friend class EtcdClient;
  EtcdWatch(EtcdClient& client, std::string key, std::string range_end,
            int64_t start_revision)
      : client_(client),
        key_(std::move(key)),
        range_end_(std::move(range_end)),
        start_revision_(start_revision) {}

  EtcdClient& client_;
  const std::string key_;
  const std::string range_end_;
  const int64_t start_revision_;
  Mutex mutex_;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mutex_) = nullptr;
  bool cancelled_ ABSL_GUARDED_BY(mutex_) = false;
};

// The first key after every key that starts with `prefix` (etcd's
// range_end for a prefix query).
std::string PrefixEnd(std::string prefix);

// Adds to `txn` the condition that `key` was created at `revision` (0: the
// key is absent): how a leader's writes are fenced by its leader key, and
// how a key is created only if absent.
void CompareCreated(etcdserverpb::TxnRequest& txn, const std::string& key,
                    int64_t revision);

}  // namespace gantry::replication
