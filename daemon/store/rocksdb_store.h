// StateStore on RocksDB. Column families: `jobs` (key: big-endian job id),
// `nodes` (key: node name), `events` (key: big-endian job id then big-endian
// sequence, so one job's history is a prefix scan; node events use job 0),
// `meta` (schema version, next job id, next event sequence, the
// replicated log index), `environments`
// (key: big-endian job or array id; read only at launch), `history` (key:
// big-endian job id: finished jobs that left the live state; read on
// demand, never at load), `history_by_end` and `history_end` (the
// history's expiry index, daemon/store/history_index.h, kept by Commit
// beside the records it indexes), and `history_by_user` (the owner index:
// one user's records without reading anyone else's). A database from
// before a family gains it at open; one from before an index is indexed
// afterwards, off the loop (IndexOlderHistory; meta `history_unindexed` and
// `history_users_unindexed` say which ids are left). Values are protobuf
// records from gantry/v1/types.proto.
//
// Thread-safety: one committer at a time, reads from any thread (RocksDB
// allows both at once).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <rocksdb/write_batch.h>

#include "daemon/store/state_store.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
}  // namespace rocksdb

namespace gantry {

class RocksDbStore final : public StateStore {
 public:
  // Opens (creating if missing) the database in `directory`.
  // Errors: UNAVAILABLE when RocksDB cannot open it (e.g. another gantryd
  // holds its lock), FAILED_PRECONDITION for an unknown schema version.
  static absl::StatusOr<std::unique_ptr<RocksDbStore>> Open(
      const std::string& directory);
  ~RocksDbStore() override;

  absl::StatusOr<Snapshot> Load() override;
  absl::Status Commit(const Batch& batch, bool sync) override;
  // The same, stored as replicated log entry `replication_index` (instead
  // of batch.replication_index): the leader's batch is not copied to set it.
  absl::Status Commit(const Batch& batch, bool sync,
                      std::optional<uint64_t> replication_index);
  absl::StatusOr<v1::JobEnvironment> Environment(
      uint64_t environment_id) override;
  absl::StatusOr<std::vector<v1::EventRecord>> JobEvents(
      uint64_t job_id) override;
  absl::StatusOr<std::vector<v1::JobRecord>> HistoryJobs(uint64_t first_id,
                                                         size_t limit) override;
  absl::StatusOr<std::vector<uint64_t>> ExpiredHistory(int64_t ended_before_ms,
                                                       size_t limit) override;
  absl::StatusOr<bool> IndexOlderHistory(size_t limit_records,
                                         size_t limit_bytes) override;
  std::unique_ptr<HistoryCursor> ReadHistory(
      uint64_t first_id, std::optional<uint32_t> only_uid) override;

  // The last replicated log entry this database holds (Batch::
  // replication_index; 0: none), read without loading the state.
  absl::StatusOr<uint64_t> ReplicationIndex();

  // A consistent copy of the database in `directory` (which must not
  // exist; on the same file system the table files are hard links), for a
  // standby that is too far behind the log in etcd. Safe while commits
  // go on. Errors: UNAVAILABLE, with RocksDB's reason.
  absl::Status CreateCheckpoint(const std::string& directory);
  // Reads every table file and checks its block checksums (a copy that
  // arrived over the network is checked before it is installed).
  // Errors: DATA_LOSS naming what is corrupt.
  absl::Status VerifyChecksums();

  // Writes every memtable out to table files, so the next open has no log
  // to replay (tests/tools/history_fill.cc, after writing a big history
  // behind gantryd's back).
  absl::Status TEST_FlushAll();
  // Drops the indexes' families and forgets they were ever built: the
  // database is then as a gantryd from before the indexes wrote it (tests
  // of the upgrade, and of that gantryd). Only closing may follow.
  // `owner_index_only`: the database is as this gantryd's release before
  // the owner index wrote it (the expiry index kept).
  absl::Status TEST_DropHistoryIndex(bool owner_index_only = false);

 private:
  RocksDbStore() = default;
  // Reads (or, on a database that has none, writes) how far the expiry
  // index reaches into the records stored before it existed.
  absl::Status StartHistoryIndex();

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // owned by db_ users
  rocksdb::ColumnFamilyHandle* jobs_ = nullptr;
  rocksdb::ColumnFamilyHandle* nodes_ = nullptr;
  rocksdb::ColumnFamilyHandle* events_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* environments_ = nullptr;
  rocksdb::ColumnFamilyHandle* history_ = nullptr;
  rocksdb::ColumnFamilyHandle* history_by_end_ = nullptr;
  rocksdb::ColumnFamilyHandle* history_end_ = nullptr;
  rocksdb::ColumnFamilyHandle* history_by_user_ = nullptr;
  // Whether IndexOlderHistory has nothing left to do (read from meta at
  // open, then only set): spares each expiry pass a read of meta.
  std::atomic<bool> history_indexed_{false};
  // Likewise for the owner index, which ReadHistory uses for one user's
  // records only once every record is in it.
  std::atomic<bool> users_indexed_{false};
  // One write batch, cleared and refilled by every commit (on the store
  // writer's thread), so that its buffer is allocated and faulted in once:
  // a flood of submissions makes batches of tens of megabytes (scripts and
  // environments), and building each in fresh memory, grown by doubling,
  // took 11% of gantryd's samples in copies alone, plus the page faults.
  rocksdb::WriteBatch write_batch_;
};

}  // namespace gantry
