// The log of group commits in etcd (keys in replication_keys.h): the leader
// appends each batch before it applies and acknowledges it; every
// controller reads it back into its RocksDB.
//
// An append is one etcd transaction that also compares the leader key's
// creation revision with the one this leader got when it won: a deposed
// leader's append fails, whatever it believes. It is idempotent: an append
// retried after a timeout finds its own entry and succeeds.
//
// Every value it writes is sealed (record_seal.h) with the etcd key as
// associated data: the log key's LogEntry, the batch of a chunked entry
// (sealed whole, then cut into parts), the truncation mark. A value that
// does not open is never applied: a read stops before it and the follower
// waits for the leader to write that index (log_follower.h); the leader
// replaces a forged value at an index it appends only when it was never
// overwritten, i.e. when no controller can have written that index before
// (an altered entry stops the leader instead, since followers may hold the
// real one).
//
// Thread-safe if the EtcdClient is (it is); holds no state of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/replication/etcd_client.h"
#include "daemon/replication/record_seal.h"
#include "daemon/replication/replication_keys.h"
#include "gantry/v1/replication.pb.h"

namespace gantry::replication {

// etcd refuses requests over --max-request-bytes (1.5 MiB by default):
// batches larger than this go in parts.
inline constexpr size_t kMaxLogValueBytes = 1 << 20;

// The error of a read that starts at an entry already truncated.
absl::Status BehindTruncation(uint64_t wanted, uint64_t truncated_through);
bool IsBehindTruncation(const absl::Status& status);

class ReplicationLog {
 public:
  ReplicationLog(EtcdClient& etcd, ReplicationKeys keys, RecordSeal& seal,
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
  // Up to `limit` entries from index `first` on; the page ends before an
  // entry that does not open (alarm raised; `more` false). Errors: one that
  // IsBehindTruncation when entry `first` was truncated (the reader needs
  // a copy of the leader's state); FAILED_PRECONDITION when it is missing
  // otherwise; DATA_LOSS for an entry that does not parse or misses a
  // part; UNAVAILABLE when etcd does not answer.
  absl::StatusOr<Page> Read(uint64_t first, size_t limit);

  // The entry a watch reported (key and value of a log key), its parts
  // read as of the revision it was written at. IsForged when it does not
  // open.
  absl::StatusOr<Entry> Decode(const mvccpb::KeyValue& kv);

  // Deletes every entry up to and including `through` (and their parts)
  // and records that it did, if the leader key still has creation revision
  // `leader_revision`. Returns etcd's revision after the deletion (older
  // revisions may then be compacted). Errors: FAILED_PRECONDITION when
  // this controller no longer leads; UNAVAILABLE.
  absl::StatusOr<int64_t> Truncate(uint64_t through, int64_t leader_revision);
  // The last entry truncated (0: none, or a mark that does not open).
  absl::StatusOr<uint64_t> TruncatedThrough();

  const ReplicationKeys& keys() const { return keys_; }
  RecordSeal& seal() const { return seal_; }

 private:
  // Writes one key of entry `index` (its log key when `is_log_key`, else
  // one of its parts) if absent.
  absl::Status AppendPart(uint64_t index, const std::string& key,
                          const std::string& value, int64_t leader_revision,
                          bool is_log_key);
  // Puts `value` over a forged `existing` value of `key`, if unchanged.
  absl::Status ReplaceForged(uint64_t index, const mvccpb::KeyValue& existing,
                             const std::string& value, int64_t leader_revision,
                             bool is_log_key);
  absl::StatusOr<Entry> DecodeAt(const mvccpb::KeyValue& kv, int64_t revision);
  absl::StatusOr<uint64_t> ParseTruncated(
      const etcdserverpb::RangeResponse& range) const;

  EtcdClient& etcd_;
  const ReplicationKeys keys_;
  RecordSeal& seal_;
  const size_t max_value_bytes_;
};

}  // namespace gantry::replication
