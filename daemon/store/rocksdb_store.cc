#include "daemon/store/rocksdb_store.h"

#include <algorithm>

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include "absl/strings/str_cat.h"
#include "daemon/store/history_index.h"

namespace gantry {
namespace {

constexpr char kSchemaVersionKey[] = "schema_version";
constexpr char kNextJobIdKey[] = "next_job_id";
constexpr char kNextEventKey[] = "next_event_sequence";
constexpr char kClusterIdKey[] = "cluster_id";
constexpr char kReplicationIndexKey[] = "replication_index";
constexpr char kTopologyKey[] = "topology";
constexpr char kRetiredUsageKey[] = "retired_usage";
// The ids [next, end) of history records that may be missing from the
// expiry index (stored by a gantryd from before it), as two big-endian
// numbers; next == end once every one is indexed.
constexpr char kHistoryUnindexedKey[] = "history_unindexed";
// Likewise for the owner index (history_by_user): which ids may lack their
// key. Its pass runs once the expiry index's is done; that one writes both.
constexpr char kHistoryUsersUnindexedKey[] = "history_users_unindexed";
constexpr uint64_t kSchemaVersion = 1;
// A write batch's buffer is kept for the next commit up to this size; a
// larger one (a big array) is let go when the next commit starts.
constexpr size_t kKeptBatchBytes = 64 << 20;

std::string EncodeU64(uint64_t value) { return EncodeBigEndian64(value); }

uint64_t DecodeU64(const rocksdb::Slice& slice) {
  return DecodeBigEndian64(std::string_view(slice.data(), slice.size()));
}

// How far an index pass over the history reaches (meta history_unindexed,
// history_users_unindexed): ids in [next, end) may lack their entries.
struct IndexProgress {
  uint64_t next = 0;
  uint64_t end = 0;

  bool done() const { return next >= end; }
  std::string Encode() const { return EncodeU64(next) + EncodeU64(end); }
  static IndexProgress Parse(const std::string& value) {
    return {.next = DecodeU64(rocksdb::Slice(value.data(), 8)),
            .end = DecodeU64(rocksdb::Slice(value.data() + 8, 8))};
  }
};

absl::Status FromRocks(const rocksdb::Status& status, const std::string& what) {
  if (status.ok()) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(what, ": ", status.ToString()));
}

template <typename Record>
absl::Status ParseInto(const rocksdb::Slice& value, const std::string& family,
                       const rocksdb::Slice& key, Record& record) {
  if (!record.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return absl::DataLossError(absl::StrCat("corrupt record in column family ",
                                            family, " (key of ", key.size(),
                                            " bytes)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(
    const std::string& directory) {
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.keep_log_file_num = 4;
  // A restart replays the write-ahead log not yet flushed to tables: bound
  // it (RocksDB flushes the families holding the oldest log past this),
  // and do not write the replayed memtables out again before serving.
  // Replaying is slower than reading tables: with 100,000 jobs held in
  // 45 MiB of log under a 64 MiB bound, gantryd took 1.67 s to load them,
  // against 1.20 s under this one.
  options.max_total_wal_size = 16 << 20;
  options.avoid_flush_during_recovery = true;
  rocksdb::ColumnFamilyOptions family_options;
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, family_options},
      {"jobs", family_options},
      {"nodes", family_options},
      {"events", family_options},
      {"meta", family_options},
      {"environments", family_options},
      {"history", family_options},
      {"history_by_end", family_options},
      {"history_end", family_options},
      {"history_by_user", family_options},
  };
  std::unique_ptr<RocksDbStore> store(new RocksDbStore());
  rocksdb::DB* db = nullptr;
  rocksdb::Status status =
      rocksdb::DB::Open(options, directory, families, &store->handles_, &db);
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "cannot open state database in ", directory, ": ", status.ToString()));
  }
  store->db_.reset(db);
  store->jobs_ = store->handles_[1];
  store->nodes_ = store->handles_[2];
  store->events_ = store->handles_[3];
  store->meta_ = store->handles_[4];
  store->environments_ = store->handles_[5];
  store->history_ = store->handles_[6];
  store->history_by_end_ = store->handles_[7];
  store->history_end_ = store->handles_[8];
  store->history_by_user_ = store->handles_[9];

  std::string version;
  status = db->Get(rocksdb::ReadOptions(), store->meta_, kSchemaVersionKey,
                   &version);
  if (status.IsNotFound()) {
    rocksdb::WriteOptions write;
    write.sync = true;
    status = db->Put(write, store->meta_, kSchemaVersionKey,
                     EncodeU64(kSchemaVersion));
    if (!status.ok()) return FromRocks(status, "writing schema version");
  } else if (!status.ok()) {
    return FromRocks(status, "reading schema version");
  } else if (DecodeU64(version) != kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "state database in ", directory, " has schema version ",
        DecodeU64(version), "; this gantryd understands ", kSchemaVersion));
  }
  if (absl::Status indexed = store->StartHistoryIndex(); !indexed.ok()) {
    return indexed;
  }
  return store;
}

RocksDbStore::~RocksDbStore() {
  if (!db_) return;
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    db_->DestroyColumnFamilyHandle(handle);
  }
  db_->Close();
}

absl::StatusOr<StateStore::Snapshot> RocksDbStore::Load() {
  Snapshot snapshot;
  {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), jobs_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      v1::JobRecord job;
      absl::Status parsed = ParseInto(it->value(), "jobs", it->key(), job);
      if (!parsed.ok()) return parsed;
      snapshot.jobs.push_back(std::move(job));
    }
    if (!it->status().ok()) return FromRocks(it->status(), "reading jobs");
  }
  {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), nodes_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      v1::NodeRecord node;
      absl::Status parsed = ParseInto(it->value(), "nodes", it->key(), node);
      if (!parsed.ok()) return parsed;
      snapshot.nodes.push_back(std::move(node));
    }
    if (!it->status().ok()) return FromRocks(it->status(), "reading nodes");
  }
  std::string value;
  rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), meta_, kNextJobIdKey, &value);
  if (status.ok()) {
    snapshot.next_job_id = DecodeU64(value);
  } else if (!status.IsNotFound()) {
    return FromRocks(status, "reading next job id");
  }
  status = db_->Get(rocksdb::ReadOptions(), meta_, kNextEventKey, &value);
  if (status.ok()) {
    snapshot.next_event_sequence = DecodeU64(value);
  } else if (!status.IsNotFound()) {
    return FromRocks(status, "reading next event sequence");
  }
  status = db_->Get(rocksdb::ReadOptions(), meta_, kClusterIdKey, &value);
  if (status.ok()) {
    snapshot.cluster_id = DecodeU64(value);
  } else if (!status.IsNotFound()) {
    return FromRocks(status, "reading cluster id");
  }
  absl::StatusOr<uint64_t> replication_index = ReplicationIndex();
  if (!replication_index.ok()) return replication_index.status();
  snapshot.replication_index = *replication_index;
  status = db_->Get(rocksdb::ReadOptions(), meta_, kTopologyKey, &value);
  if (status.ok()) {
    v1::TopologyRecord topology;
    absl::Status parsed = ParseInto(value, "meta", kTopologyKey, topology);
    if (!parsed.ok()) return parsed;
    snapshot.topology = std::move(topology);
  } else if (!status.IsNotFound()) {
    return FromRocks(status, "reading topology");
  }
  status = db_->Get(rocksdb::ReadOptions(), meta_, kRetiredUsageKey, &value);
  if (status.ok()) {
    v1::FairShareRecord usage;
    absl::Status parsed = ParseInto(value, "meta", kRetiredUsageKey, usage);
    if (!parsed.ok()) return parsed;
    snapshot.retired_usage = std::move(usage);
  } else if (!status.IsNotFound()) {
    return FromRocks(status, "reading retired fair-share usage");
  }
  // A job id is never handed out twice, even if meta lagged behind (or
  // every job has left the live state).
  {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), history_));
    it->SeekToLast();
    if (it->Valid() && DecodeU64(it->key()) >= snapshot.next_job_id) {
      snapshot.next_job_id = DecodeU64(it->key()) + 1;
    }
    if (!it->status().ok()) return FromRocks(it->status(), "reading history");
  }
  if (!snapshot.jobs.empty() &&
      snapshot.jobs.back().id() >= snapshot.next_job_id) {
    snapshot.next_job_id = snapshot.jobs.back().id() + 1;
  }
  return snapshot;
}

absl::Status RocksDbStore::Commit(const Batch& batch, bool sync) {
  return Commit(batch, sync, batch.replication_index);
}

absl::Status RocksDbStore::Commit(const Batch& batch, bool sync,
                                  std::optional<uint64_t> replication_index) {
  if (write_batch_.GetDataSize() > kKeptBatchBytes) {
    write_batch_ = rocksdb::WriteBatch();  // an outsized one: give it back
  }
  write_batch_.Clear();
  rocksdb::WriteBatch& write_batch = write_batch_;
  std::string value;
  for (const v1::JobRecord& job : batch.jobs) {
    job.SerializeToString(&value);
    write_batch.Put(jobs_, EncodeU64(job.id()), value);
  }
  for (const auto& [id, environment] : batch.environments) {
    environment.SerializeToString(&value);
    write_batch.Put(environments_, EncodeU64(id), value);
  }
  for (const v1::NodeRecord& node : batch.nodes) {
    node.SerializeToString(&value);
    write_batch.Put(nodes_, node.name(), value);
  }
  for (const v1::EventRecord& event : batch.events) {
    event.SerializeToString(&value);
    write_batch.Put(events_,
                    EncodeU64(event.job_id()) + EncodeU64(event.sequence()),
                    value);
  }
  if (batch.next_job_id) {
    write_batch.Put(meta_, kNextJobIdKey, EncodeU64(*batch.next_job_id));
  }
  if (batch.next_event_sequence) {
    write_batch.Put(meta_, kNextEventKey,
                    EncodeU64(*batch.next_event_sequence));
  }
  if (batch.topology) {
    batch.topology->SerializeToString(&value);
    write_batch.Put(meta_, kTopologyKey, value);
  }
  if (batch.cluster_id) {
    write_batch.Put(meta_, kClusterIdKey, EncodeU64(*batch.cluster_id));
  }
  for (const v1::JobRecord& job : batch.retired) {
    const std::string key = EncodeU64(job.id());
    job.SerializeToString(&value);
    write_batch.Put(history_, key, value);
    write_batch.Delete(jobs_, key);
    write_batch.Put(history_by_end_,
                    ExpiryIndexKey(job.end_time_ms(), job.id()),
                    rocksdb::Slice());
    write_batch.Put(history_end_, key,
                    EncodeHistoryEnd(job.end_time_ms(), job.uid()));
    write_batch.Put(history_by_user_, UserIndexKey(job.uid(), job.id()),
                    rocksdb::Slice());
  }
  for (uint64_t id : batch.expired) {
    const std::string key = EncodeU64(id);
    write_batch.Delete(history_, key);
    // The job's events: every key with its id as prefix.
    write_batch.DeleteRange(events_, key, EncodeU64(id + 1));
    // Its index entry, found by its end time (a small read; none for a
    // record the index has not reached yet).
    rocksdb::Status found =
        db_->Get(rocksdb::ReadOptions(), history_end_, key, &value);
    if (found.ok()) {
      // A value of another length (none is written) is read as its first
      // 8 bytes: an index entry must never fail the commit, which would
      // stop gantryd.
      const HistoryEnd end = ParseHistoryEnd(value).value_or(
          HistoryEnd{.end_time_ms = static_cast<int64_t>(DecodeU64(value)),
                     .uid = std::nullopt});
      write_batch.Delete(history_by_end_, ExpiryIndexKey(end.end_time_ms, id));
      // A record indexed before the owner index has no key there yet; the
      // owner index's pass skips ids that are gone.
      if (end.uid) {
        write_batch.Delete(history_by_user_, UserIndexKey(*end.uid, id));
      }
      write_batch.Delete(history_end_, key);
    } else if (!found.IsNotFound()) {
      return FromRocks(found, "reading the history's expiry index");
    }
  }
  if (batch.retired_usage) {
    batch.retired_usage->SerializeToString(&value);
    write_batch.Put(meta_, kRetiredUsageKey, value);
  }
  if (replication_index) {
    write_batch.Put(meta_, kReplicationIndexKey, EncodeU64(*replication_index));
  }
  rocksdb::WriteOptions options;
  options.sync = sync;
  return FromRocks(db_->Write(options, &write_batch), "committing state");
}

absl::StatusOr<uint64_t> RocksDbStore::ReplicationIndex() {
  std::string value;
  rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), meta_, kReplicationIndexKey, &value);
  if (status.IsNotFound()) return 0;
  if (!status.ok()) return FromRocks(status, "reading the replication index");
  return DecodeU64(value);
}

absl::StatusOr<v1::JobEnvironment> RocksDbStore::Environment(
    uint64_t environment_id) {
  v1::JobEnvironment environment;
  const std::string key = EncodeU64(environment_id);
  std::string value;
  rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), environments_, key, &value);
  if (status.IsNotFound()) return environment;
  if (!status.ok()) return FromRocks(status, "reading an environment");
  absl::Status parsed = ParseInto(value, "environments", key, environment);
  if (!parsed.ok()) return parsed;
  return environment;
}

absl::StatusOr<std::vector<v1::EventRecord>> RocksDbStore::JobEvents(
    uint64_t job_id) {
  std::vector<v1::EventRecord> events;
  const std::string prefix = EncodeU64(job_id);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), events_));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    v1::EventRecord event;
    absl::Status parsed = ParseInto(it->value(), "events", it->key(), event);
    if (!parsed.ok()) return parsed;
    events.push_back(std::move(event));
  }
  if (!it->status().ok()) return FromRocks(it->status(), "reading events");
  return events;
}

absl::Status RocksDbStore::CreateCheckpoint(const std::string& directory) {
  rocksdb::Checkpoint* raw = nullptr;
  if (absl::Status created =
          FromRocks(rocksdb::Checkpoint::Create(db_.get(), &raw),
                    "preparing a checkpoint");
      !created.ok()) {
    return created;
  }
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // log_size_for_flush 0: flush the memtables first, so the copy is table
  // files plus a small manifest and the standby replays no write-ahead log.
  return FromRocks(checkpoint->CreateCheckpoint(directory,
                                                /*log_size_for_flush=*/0),
                   absl::StrCat("writing a checkpoint to ", directory));
}

absl::Status RocksDbStore::VerifyChecksums() {
  rocksdb::Status verified = db_->VerifyChecksum();
  if (verified.ok()) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("the database fails its checksums: ", verified.ToString()));
}

absl::Status RocksDbStore::TEST_FlushAll() {
  return FromRocks(db_->Flush(rocksdb::FlushOptions(), handles_),
                   "flushing memtables");
}

absl::StatusOr<std::vector<v1::JobRecord>> RocksDbStore::HistoryJobs(
    uint64_t first_id, size_t limit) {
  std::vector<v1::JobRecord> jobs;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), history_));
  for (it->Seek(EncodeU64(first_id)); it->Valid() && jobs.size() < limit;
       it->Next()) {
    v1::JobRecord job;
    absl::Status parsed = ParseInto(it->value(), "history", it->key(), job);
    if (!parsed.ok()) return parsed;
    jobs.push_back(std::move(job));
  }
  if (!it->status().ok()) return FromRocks(it->status(), "reading history");
  return jobs;
}

absl::StatusOr<std::vector<uint64_t>> RocksDbStore::ExpiredHistory(
    int64_t ended_before_ms, size_t limit) {
  std::vector<uint64_t> expired;
  if (ended_before_ms <= 0) return expired;
  // Keys only, and only up to the cutoff: the records are never read.
  const std::string bound = ExpiryIndexKey(ended_before_ms, 0);
  const rocksdb::Slice upper(bound);
  rocksdb::ReadOptions options;
  options.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(options, history_by_end_));
  for (it->SeekToFirst(); it->Valid() && expired.size() < limit; it->Next()) {
    const rocksdb::Slice key = it->key();
    std::optional<ExpiryIndexEntry> entry =
        ParseExpiryIndexKey(std::string_view(key.data(), key.size()));
    if (!entry) {
      return absl::DataLossError(
          absl::StrCat("corrupt key in column family history_by_end (",
                       key.size(), " bytes)"));
    }
    expired.push_back(entry->job_id);
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), "reading the history's expiry index");
  }
  return expired;
}

absl::Status RocksDbStore::StartHistoryIndex() {
  // Every record stored so far (ids up to the last one) may lack its index
  // entries on a database from before an index; the ones retired from now
  // on get theirs as they are written.
  uint64_t end = 0;
  {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), history_));
    it->SeekToLast();
    if (!it->status().ok()) return FromRocks(it->status(), "reading history");
    if (it->Valid()) end = DecodeU64(it->key()) + 1;
  }
  std::string expiry;
  rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), meta_, kHistoryUnindexedKey, &expiry);
  if (!status.ok() && !status.IsNotFound()) {
    return FromRocks(status, "reading the history's index progress");
  }
  const bool expiry_known = status.ok();
  std::string users;
  status = db_->Get(rocksdb::ReadOptions(), meta_, kHistoryUsersUnindexedKey,
                    &users);
  if (!status.ok() && !status.IsNotFound()) {
    return FromRocks(status, "reading the history's owner index progress");
  }
  const bool users_known = status.ok();
  rocksdb::WriteBatch batch;
  if (!expiry_known) {
    expiry = IndexProgress{.next = 0, .end = end}.Encode();
    batch.Put(meta_, kHistoryUnindexedKey, expiry);
  }
  if (!users_known) {
    // Without an expiry index either, its pass (which writes both) covers
    // every record: nothing is left for the owner index's own.
    users = IndexProgress{.next = expiry_known ? 0 : end, .end = end}.Encode();
    batch.Put(meta_, kHistoryUsersUnindexedKey, users);
  }
  if (batch.Count() > 0) {
    rocksdb::WriteOptions write;
    write.sync = true;
    status = db_->Write(write, &batch);
    if (!status.ok()) return FromRocks(status, "writing the history's index");
  }
  history_indexed_ = IndexProgress::Parse(expiry).done();
  users_indexed_ = history_indexed_ && IndexProgress::Parse(users).done();
  return absl::OkStatus();
}

absl::StatusOr<bool> RocksDbStore::IndexOlderHistory(size_t limit_records,
                                                     size_t limit_bytes) {
  if (users_indexed_) return true;
  // First the expiry index's pass (it writes the owner index's keys too),
  // then, for a database that had the expiry index already, the owner's.
  const bool expiry_pass = !history_indexed_;
  const char* const marker =
      expiry_pass ? kHistoryUnindexedKey : kHistoryUsersUnindexedKey;
  std::string progress;
  rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), meta_, marker, &progress);
  if (!status.ok()) {
    return FromRocks(status, "reading the history's index progress");
  }
  IndexProgress reach = IndexProgress::Parse(progress);
  rocksdb::WriteBatch batch;
  rocksdb::ReadOptions options;
  options.fill_cache = false;  // read once, in bulk
  const std::string upper_key = EncodeU64(reach.end);
  const rocksdb::Slice upper(upper_key);
  options.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(options, history_));
  size_t records = 0;
  size_t bytes = 0;
  it->Seek(EncodeU64(reach.next));
  for (; it->Valid() && records < limit_records && bytes < limit_bytes;
       it->Next(), ++records) {
    const rocksdb::Slice value = it->value();
    const std::string_view record(value.data(), value.size());
    const std::optional<int64_t> end_time = PeekEndTime(record);
    const std::optional<uint32_t> uid = PeekUid(record);
    const uint64_t id = DecodeU64(it->key());
    if (!end_time || !uid) {
      return absl::DataLossError(absl::StrCat(
          "corrupt record in column family history (job ", id, ")"));
    }
    if (expiry_pass) {
      batch.Put(history_by_end_, ExpiryIndexKey(*end_time, id),
                rocksdb::Slice());
    }
    batch.Put(history_end_, it->key(), EncodeHistoryEnd(*end_time, *uid));
    batch.Put(history_by_user_, UserIndexKey(*uid, id), rocksdb::Slice());
    bytes += value.size();
    reach.next = id + 1;
  }
  if (!it->status().ok()) return FromRocks(it->status(), "reading history");
  const bool done = !it->Valid();
  if (done) reach.next = reach.end;
  batch.Put(meta_, marker, reach.Encode());
  // Not synced: after a crash the next start indexes the same records
  // again, to the same keys.
  if (absl::Status written =
          FromRocks(db_->Write(rocksdb::WriteOptions(), &batch),
                    "writing the history's index");
      !written.ok()) {
    return written;
  }
  if (!done) return false;
  if (!expiry_pass) {
    users_indexed_ = true;
    return true;
  }
  history_indexed_ = true;
  // The owner index's own pass, when it has one, comes next.
  status = db_->Get(rocksdb::ReadOptions(), meta_, kHistoryUsersUnindexedKey,
                    &progress);
  if (!status.ok()) {
    return FromRocks(status, "reading the history's owner index progress");
  }
  users_indexed_ = IndexProgress::Parse(progress).done();
  return users_indexed_.load();
}

namespace {

// A RocksDB iterator over the history, pinned to the database as of its
// creation (RocksDB's implicit snapshot).
class RocksDbHistoryCursor final : public StateStore::HistoryCursor {
 public:
  RocksDbHistoryCursor(std::unique_ptr<rocksdb::Iterator> it, uint64_t first_id,
                       std::optional<uint32_t> only_uid)
      : it_(std::move(it)), only_uid_(only_uid) {
    it_->Seek(EncodeU64(first_id));
  }

  absl::StatusOr<std::optional<Entry>> Next() override {
    if (started_ && it_->Valid()) it_->Next();
    started_ = true;
    if (!it_->Valid()) {
      if (!it_->status().ok()) {
        return FromRocks(it_->status(), "reading history");
      }
      return std::optional<Entry>();
    }
    const rocksdb::Slice value = it_->value();
    Entry entry;
    entry.id = DecodeU64(it_->key());
    entry.bytes = value.size();
    if (only_uid_) {
      std::optional<uint32_t> uid =
          PeekUid(std::string_view(value.data(), value.size()));
      if (uid && *uid != *only_uid_) return entry;
    }
    absl::Status parsed =
        ParseInto(value, "history", it_->key(), entry.record.emplace());
    if (!parsed.ok()) return parsed;
    return entry;
  }

 private:
  std::unique_ptr<rocksdb::Iterator> it_;
  const std::optional<uint32_t> only_uid_;
  bool started_ = false;
};

// One user's history through the owner index: the keys (uid, id) in id
// order, each record read by id, all as of one snapshot. Others' records
// are never visited, so a user's query costs their jobs, not everyone's.
class RocksDbUserHistoryCursor final : public StateStore::HistoryCursor {
 public:
  RocksDbUserHistoryCursor(rocksdb::DB& db,
                           rocksdb::ColumnFamilyHandle& history,
                           rocksdb::ColumnFamilyHandle& by_user, uint32_t uid,
                           uint64_t first_id)
      : db_(db),
        history_(history),
        snapshot_(db.GetSnapshot()),
        upper_(EncodeU64(uint64_t{uid} + 1)),
        upper_slice_(upper_) {
    read_.snapshot = snapshot_;
    read_.fill_cache = false;
    rocksdb::ReadOptions keys = read_;
    keys.iterate_upper_bound = &upper_slice_;
    it_.reset(db_.NewIterator(keys, &by_user));
    it_->Seek(UserIndexKey(uid, first_id));
  }
  ~RocksDbUserHistoryCursor() override {
    it_.reset();
    db_.ReleaseSnapshot(snapshot_);
  }
  RocksDbUserHistoryCursor(const RocksDbUserHistoryCursor&) = delete;
  RocksDbUserHistoryCursor& operator=(const RocksDbUserHistoryCursor&) = delete;

  absl::StatusOr<std::optional<Entry>> Next() override {
    for (; it_->Valid(); it_->Next()) {
      const rocksdb::Slice key = it_->key();
      const std::optional<uint64_t> id =
          ParseUserIndexKey(std::string_view(key.data(), key.size()));
      if (!id) {
        return absl::DataLossError(
            absl::StrCat("corrupt key in column family history_by_user (",
                         key.size(), " bytes)"));
      }
      const std::string record_key = EncodeU64(*id);
      rocksdb::Status found = db_.Get(read_, &history_, record_key, &value_);
      // A key whose record is gone (an index pass that raced an expiry).
      if (found.IsNotFound()) continue;
      if (!found.ok()) return FromRocks(found, "reading history");
      Entry entry;
      entry.id = *id;
      entry.bytes = value_.size();
      absl::Status parsed = ParseInto(rocksdb::Slice(value_), "history",
                                      record_key, entry.record.emplace());
      if (!parsed.ok()) return parsed;
      it_->Next();
      return entry;
    }
    if (!it_->status().ok()) {
      return FromRocks(it_->status(), "reading the history's owner index");
    }
    return std::optional<Entry>();
  }

 private:
  rocksdb::DB& db_;
  rocksdb::ColumnFamilyHandle& history_;
  const rocksdb::Snapshot* const snapshot_;
  const std::string upper_;
  const rocksdb::Slice upper_slice_;
  rocksdb::ReadOptions read_;
  std::unique_ptr<rocksdb::Iterator> it_;
  std::string value_;
};

}  // namespace

std::unique_ptr<StateStore::HistoryCursor> RocksDbStore::ReadHistory(
    uint64_t first_id, std::optional<uint32_t> only_uid) {
  if (only_uid && users_indexed_) {
    return std::make_unique<RocksDbUserHistoryCursor>(
        *db_, *history_, *history_by_user_, *only_uid, first_id);
  }
  rocksdb::ReadOptions options;
  // A scan of months of history must not push the live state's blocks
  // out of the cache.
  options.fill_cache = false;
  return std::make_unique<RocksDbHistoryCursor>(
      std::unique_ptr<rocksdb::Iterator>(db_->NewIterator(options, history_)),
      first_id, only_uid);
}

absl::Status RocksDbStore::TEST_DropHistoryIndex(bool owner_index_only) {
  rocksdb::WriteOptions options;
  options.sync = true;
  std::vector<const char*> markers = {kHistoryUsersUnindexedKey};
  std::vector<rocksdb::ColumnFamilyHandle*> families = {history_by_user_};
  if (!owner_index_only) {
    markers.push_back(kHistoryUnindexedKey);
    families.push_back(history_by_end_);
    families.push_back(history_end_);
  }
  if (owner_index_only) {
    // That release's history_end held end times alone.
    rocksdb::WriteBatch batch;
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), history_end_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      batch.Put(history_end_, it->key(),
                rocksdb::Slice(it->value().data(),
                               std::min<size_t>(it->value().size(), 8)));
    }
    if (absl::Status written =
            FromRocks(db_->Write(options, &batch), "rewriting history_end");
        !written.ok()) {
      return written;
    }
  }
  for (const char* marker : markers) {
    if (absl::Status forgot = FromRocks(db_->Delete(options, meta_, marker),
                                        "forgetting the history's indexes");
        !forgot.ok()) {
      return forgot;
    }
  }
  for (rocksdb::ColumnFamilyHandle* family : families) {
    if (absl::Status dropped = FromRocks(db_->DropColumnFamily(family),
                                         "dropping the expiry index");
        !dropped.ok()) {
      return dropped;
    }
  }
  return absl::OkStatus();
}

}  // namespace gantry
