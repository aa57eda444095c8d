// The log of group commits in etcd (keys in replication_keys.h): the leader
// appends each batch before it applies and acknowledges it; every
// controller reads it back into its RocksDB.
//
// An append is one etcd transaction that also compares the leader key's
// creation revision with the one this leader got when it won: a deposed
// leader's append fails, whatever it believes. It is idempotent: an append
// retried after a timeout finds its own entry and succeeds.
//
// Thread-safe if the EtcdClient is (it is); holds no state of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/replication/etcd_client.h"
#include "daemon/replication/replication_keys.h"
#include "gantry/v1/replication.pb.h"

namespace gantry::replication {

// etcd refuses requests over --max-request-bytes (1.5 MiB by default):
// batches larger than this go in parts.
inline constexpr size_t kMaxLogValueBytes = 1 << 20;

class ReplicationLog {
 public:
  ReplicationLog(EtcdClient& etcd, ReplicationKeys keys,
                 size_t max_value_bytes = kMaxLogValueBytes);

  // Appends `batch` (a serialized ReplicatedBatch) as entry `index` if the
  // leader key still has creation revision `leader_revision`. OK: the entry
  // is on a majority of etcd members. FAILED_PRECONDITION: this controller
  // is no longer the leader (or the entry holds another batch); nothing was
  // appended. UNAVAILABLE: etcd did not answer; the entry may or may not be
  // there, so retry with the same index and batch.
  absl::Status Append(uint64_t index, const std::string& batch,
                      int64_t leader_revision);

  struct Entry {
    uint64_t index = 0;
    v1::ReplicatedBatch batch;
  };
  struct Page {
    std::vector<Entry> entries;  // consecutive, from the index asked for
    int64_t revision = 0;        // etcd's revision the page was read at
    bool more = false;           // entries past the last one exist
  };
  // Up to `limit` entries from index `first` on. FAILED_PRECONDITION when
  // entry `first` is gone but later ones exist (truncated behind a
  // snapshot this reader lacks), DATA_LOSS for an entry that does not
  // parse or misses a part, UNAVAILABLE when etcd does not answer.
  absl::StatusOr<Page> Read(uint64_t first, size_t limit);

  // The entry a watch reported (key and value of a log key).
  absl::StatusOr<Entry> Decode(const mvccpb::KeyValue& kv);

  const ReplicationKeys& keys() const { return keys_; }

 private:
  absl::Status AppendPart(const std::string& key, const std::string& value,
                          int64_t leader_revision);

  EtcdClient& etcd_;
  const ReplicationKeys keys_;
  const size_t max_value_bytes_;
};

}  // namespace gantry::replication
