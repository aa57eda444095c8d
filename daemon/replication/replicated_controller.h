// A gantryd that is one of several controllers sharing an etcd cluster
// (--etcd): the pieces of daemon/replication wired together.
//
//   standby: follows the log in etcd into the local RocksDB (LogFollower)
//            and campaigns for leadership (Leadership), while its ports
//            answer with where the leader is (StandbyService, set up by
//            the caller);
//   leader:  once elected, applies the rest of the log, and then runs the
//            ordinary controller on a ReplicatedStore, so every group
//            commit is in etcd before it is acknowledged.
//
// A leader never goes back to standby in the same process: when it may
// have been replaced (its lease lapsed, an append was refused) the caller's
// `step_down` runs, which re-executes gantryd so that it starts over as a
// standby from what is durable, with no memory of its time as leader.
//
// Threading: WaitUntilLeader and store() on main's thread; the follower
// and the lease renewal run on threads of their own.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "common/tls_credentials.h"
#include "daemon/replication/etcd_client.h"
#include "daemon/replication/etcd_transport.h"
#include "daemon/replication/leadership.h"
#include "daemon/replication/log_follower.h"
#include "daemon/replication/log_truncator.h"
#include "daemon/replication/record_seal.h"
#include "daemon/replication/replicated_store.h"
#include "daemon/replication/replication_log.h"
#include "daemon/replication/snapshot_install.h"
#include "daemon/replication/standby_service.h"

namespace gantry::replication {

struct ReplicationOptions {
  std::vector<std::string> etcd_endpoints;
  // TLS to etcd, or --etcd-insecure (etcd_transport.h).
  EtcdTlsOptions etcd_tls;
  // The cluster key's file (--replication-key; record_seal.h): required.
  std::string replication_key;
  std::string prefix = "/gantry";
  // This controller's name among its peers (default: the host name).
  std::string name;
  // HOST:PORT where clients and agents reach this controller.
  std::string address;
  int64_t lease_ttl_seconds = 2;
  std::chrono::milliseconds etcd_timeout{2000};
  // gantryd's --state-dir: where a copy of the leader's state is put.
  std::string state_dir;
  // How a standby dials the leader for that copy (TLS when --tls-ca).
  ClientTls peer_tls;
  // Log entries the leader keeps in etcd behind the slowest standby.
  uint64_t log_retain = 10'000;
  std::chrono::milliseconds truncate_interval{5000};
};

class ReplicatedController {
 public:
  using StepDown = std::function<void(const std::string& reason)>;

  // Errors: INVALID_ARGUMENT for bad endpoints or TLS settings;
  // FAILED_PRECONDITION when the endpoints are not one etcd cluster.
  // Errors: INVALID_ARGUMENT for bad endpoints or no replication key;
  // those of RecordSeal::FromKeyFile.
  static absl::StatusOr<std::unique_ptr<ReplicatedController>> Create(
      ReplicationOptions options, RocksDbStore& local, StepDown step_down);
  ~ReplicatedController();

  // Follows the log and campaigns until elected; then applies the rest of
  // the log. `standby` learns the leader meanwhile. Errors: the log cannot
  // be followed from the local state (FAILED_PRECONDITION: too far behind),
  // or the local database fails.
  absl::Status WaitUntilLeader(StandbyService& standby);

  // The leader's store (valid after WaitUntilLeader returned OK).
  StateStore& store() { return *store_; }
  ReplicatedStore& replicated_store() { return *store_; }
  Leadership& leadership() { return *leadership_; }
  EtcdClient& etcd() { return *etcd_; }
  const ReplicationOptions& options() const { return options_; }
  const ReplicationKeys& keys() const { return log_->keys(); }
  RecordSeal& seal() { return *seal_; }
  uint64_t last_index() const { return store_ ? store_->last_index() : 0; }
  uint64_t truncated_through() const {
    return truncator_ ? truncator_->truncated_through() : 0;
  }
  // The secret standbys show to get a copy of this leader's state (derived
  // from the cluster key; never stored).
  const std::string& snapshot_token() const { return seal_->snapshot_token(); }

 private:
  ReplicatedController(ReplicationOptions options, RocksDbStore& local,
                       StepDown step_down, std::unique_ptr<EtcdClient> etcd,
                       std::unique_ptr<RecordSeal> seal);

  // For a standby behind the log's truncation: copies the leader's state
  // beside the local database (retrying until it has it) and restarts
  // gantryd to install it. Returns only an error to give up on.
  absl::Status CopyLeaderStateAndRestart(StandbyService& standby);
  absl::StatusOr<uint64_t> FetchFromLeader(const SnapshotPaths& paths,
                                           StandbyService& standby);
  // Deletes the token earlier versions published in clear in etcd.
  absl::Status RetireLegacySnapshotToken();
  // Refuses (FAILED_PRECONDITION, saying how to upgrade) a log in etcd that
  // an earlier gantryd wrote unsealed: its entries would all be refused.
  absl::Status RefuseUnsealedLog();
  // Asks `ask` again, every second, while etcd does not answer it
  // (UNAVAILABLE or DEADLINE_EXCEEDED: no quorum, members unreachable),
  // telling the standby's callers why; returns its first answer. A
  // controller that stepped down for want of a quorum starts again while
  // etcd still has none: it waits for etcd instead of exiting.
  absl::Status AskUntilEtcdAnswers(const char* what, StandbyService& standby,
                                   const std::function<absl::Status()>& ask);
  // On a log that is empty (its prefix cleared, as an upgrade does) a new
  // leader whose state is past index 0 marks the log truncated through its
  // applied index, so that a standby behind it copies its state instead of
  // finding entries it cannot reach.
  absl::Status MarkEmptyLogTruncated(uint64_t applied_index);

  const ReplicationOptions options_;
  RocksDbStore& local_;
  const StepDown step_down_;
  std::unique_ptr<EtcdClient> etcd_;
  std::unique_ptr<RecordSeal> seal_;
  std::unique_ptr<ReplicationLog> log_;
  std::unique_ptr<Leadership> leadership_;
  std::unique_ptr<LogFollower> follower_;
  std::unique_ptr<ReplicatedStore> store_;
  std::unique_ptr<LogTruncator> truncator_;
};

}  // namespace gantry::replication
