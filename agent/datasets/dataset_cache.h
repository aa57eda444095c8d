// The node's dataset cache: which datasets are on local disk, for whom,
// at which content version, and what to evict when space runs out.
//
// Layout: ROOT (root-owned, 0711: users may pass through, not list) holds
// one directory per user, ROOT/<uid> (owned by the user, 0700), and in it
// one entry per dataset version, ROOT/<uid>/<name>.<version> (layout of an
// entry: dataset_tree.h). Only the user (and root) can read their copies.
// ROOT/.records (root's, 0700) holds the cache's own record of each entry
// (dataset_record.h).
// The source tree is read, and the copy written, by a DatasetWorker, which
// in the agent is a helper process running as the user
// (dataset_stage_process.h); the cache itself only creates the per-user
// directory, keeps the books and decides.
//
// A dataset is its owner's source directory, as placement keys it
// (scheduler_types.h DatasetKey): the same directory staged under two names
// is one copy, filed under the name it was first staged with. A stage
// scans the source as the user to learn its content version; an entry of
// that source and version is a hit (nothing is copied); otherwise space is
// made (least recently used entries first, never one a job pins or holds,
// and within the user's own limit), the tree is copied, and older versions
// of the same dataset are dropped. A successful stage pins the entry for the
// job until Release, so nothing a running or about-to-run job uses is ever
// evicted. A prefetch stages the same way; one made ahead for a waiting job
// holds the entry for that job until Release or until the hold lapses (the
// job went elsewhere), whichever comes first, and one made for no job pins
// nothing once it is done.
//
// What the cache trusts. A user owns ROOT/<uid> and can write into it, so
// nothing in it is believed: the cache keeps its own record of each entry
// in ROOT/.records (root-only, dataset_record.h: owner, name, version,
// source, size, last use, and a fingerprint of the entry's files taken by
// the agent itself, dataset_measure.h). Every user's directory is audited
// (walked by the agent without following links) when the cache opens and
// on every miss, before room is made; a hit's entry is checked before it
// is served; a prefetch is a stage in all of this, and leaves the same
// record. An entry whose files no longer match its fingerprint is never
// served: it is dropped (also one only held for a waiting job, which then
// copies it afresh), or, while a running job uses it, charged at what it
// really holds and dropped once no job uses it. Anything the cache does not
// know is removed as its owner (and charged, by the blocks it holds, while
// it cannot be); a held entry is known, so never removed so, nor evicted.
// A partial copy is charged at least its full size. So what a user writes
// into their directory counts against their limit and the node's capacity
// by the next stage that needs room; a user's writes into a copy of theirs
// still running are seen when it ends. Holds are not recorded: a restarted
// agent keeps each entry and its last use, not what it held it for.
//
// Thread-safe: one mutex guards the books; the scan, the copy and the
// audits' walks run outside it, and two stages of the same dataset for the
// same user wait for each other rather than copy twice.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/datasets/dataset_tree.h"
#include "common/clock.h"
#include "common/mutex.h"

namespace gantry::agent {

// Who a stage acts for.
struct DatasetUser {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::string name;          // for messages
  bool switch_user = false;  // false: act as the agent itself (tests, non-root)
};

// Reads and writes trees with the user's credentials.
class DatasetWorker {
 public:
  virtual ~DatasetWorker() = default;
  virtual absl::StatusOr<DatasetManifest> Scan(const DatasetUser& user,
                                               const std::string& source,
                                               DatasetVersionBy version_by) = 0;
  // Copies `source` into `entry`; fails ABORTED if its version is no
  // longer `version`. `earlier_entry` ("" for none): a complete copy of an
  // earlier version whose unchanged files are taken from it
  // (CopyOptions::earlier_entry).
  virtual absl::StatusOr<CopyResult> Copy(const DatasetUser& user,
                                          const std::string& source,
                                          const std::string& version,
                                          DatasetVersionBy version_by,
                                          const std::string& entry,
                                          const std::string& earlier_entry,
                                          const StageProgress& progress) = 0;
  // Removes `path` (an entry or a partial copy) and everything in it.
  virtual absl::Status Remove(const DatasetUser& user,
                              const std::string& path) = 0;
};

// A worker with this process's own credentials (tests; an agent that is
// not root can only stage as itself).
class InProcessDatasetWorker : public DatasetWorker {
 public:
  absl::StatusOr<DatasetManifest> Scan(const DatasetUser& user,
                                       const std::string& source,
                                       DatasetVersionBy version_by) override;
  absl::StatusOr<CopyResult> Copy(const DatasetUser& user,
                                  const std::string& source,
                                  const std::string& version,
                                  DatasetVersionBy version_by,
                                  const std::string& entry,
                                  const std::string& earlier_entry,
                                  const StageProgress& progress) override;
  absl::Status Remove(const DatasetUser& user,
                      const std::string& path) override;
};

struct DatasetCacheOptions {
  std::string root;             // [agent] cache-dir
  uint64_t capacity_bytes = 0;  // [agent] cache-size
  uint64_t per_user_bytes = 0;  // [agent] cache-user-limit; 0: capacity
};

struct StagedDataset {
  std::string local_path;  // what GANTRY_DATASET_<NAME> names
  std::string version;
  bool hit = false;            // served from the cache, nothing copied
  uint64_t bytes_total = 0;    // the dataset's size
  uint64_t bytes_copied = 0;   // read from shared storage this time
  uint64_t bytes_resumed = 0;  // found in an interrupted copy
  uint64_t bytes_reused = 0;   // taken from the node's earlier version
};

// One cached entry, as `gantry cache` lists it.
struct CachedDataset {
  uid_t uid = 0;
  std::string name;
  std::string version;
  uint64_t bytes = 0;
  int64_t last_use_ms = 0;
  std::set<uint64_t> jobs;  // pinning jobs
  std::string source;       // where it was staged from (kept in its record)
};

struct DatasetCacheCounters {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t bytes_staged = 0;
  uint64_t bytes_evicted = 0;
  uint64_t evictions = 0;
};

class DatasetCache {
 public:
  // Opens the cache at options.root: creates it (root-owned, 0711) when
  // absent, reads the records of the entries already there and audits
  // every user's directory against them (an entry without a valid record,
  // or whose files changed, is removed). INTERNAL when it is unusable (not
  // a directory, writable by others, not creatable).
  static absl::StatusOr<std::unique_ptr<DatasetCache>> Open(
      DatasetCacheOptions options, DatasetWorker& worker, Clock& clock);

  // Makes `source` available for `job` as user `user` under `name`, pinned
  // for the job. Errors: those of the worker's scan and copy (naming the
  // file), RESOURCE_EXHAUSTED when the cache or the user's limit cannot
  // make room (saying how much is pinned), INVALID_ARGUMENT for a name
  // that is not a dataset name, ABORTED when the copy was changed while it
  // was being staged, FAILED_PRECONDITION when the cached copy was changed
  // while a job still uses it, INTERNAL when the user's directory or the
  // cache's records are unusable.
  // `version_by`: how the source's versions are told apart
  // (DatasetVersionBy, dataset_tree.h).
  absl::StatusOr<StagedDataset> Stage(
      uint64_t job, const DatasetUser& user, const std::string& name,
      const std::string& source, const StageProgress& progress,
      DatasetVersionBy version_by = DatasetVersionBy::kMetadata);

  // Stages as Stage does, ahead of any launch (DatasetPrefetch), counted in
  // bytes_staged but not as a hit or a miss. `job` 0:
  // nothing stays pinned once the copy is done. Otherwise the entry is held
  // for `job` until Release(job), or until the clock reaches `hold_until_ms`
  // if the job has not staged it itself by then (a stage by the job pins it
  // with no time limit). Errors: as Stage.
  absl::StatusOr<StagedDataset> Prefetch(
      uint64_t job, int64_t hold_until_ms, const DatasetUser& user,
      const std::string& name, const std::string& source,
      const StageProgress& progress,
      DatasetVersionBy version_by = DatasetVersionBy::kMetadata);

  // Unpins everything `job` pinned or held.
  void Release(uint64_t job);

  // Drops the holds whose time has passed (the heartbeat's tick; making
  // room and evicting do it too), so that the next listing shows them gone.
  void ExpireHolds();

  // Evicts the user's dataset a job called `name` (whichever name its copy
  // is filed under), every version not pinned. NOT_FOUND when none is
  // cached; FAILED_PRECONDITION when a job pins or holds it (naming the
  // job) or it is being staged.
  absl::Status Evict(uid_t uid, const std::string& name);

  std::vector<CachedDataset> List() const;
  // Grows whenever what List returns changes (a stage, a hit, an
  // eviction), so that a reporter can tell whether to report again.
  uint64_t Generation() const;
  uint64_t UsedBytes() const;
  uint64_t CapacityBytes() const { return options_.capacity_bytes; }
  DatasetCacheCounters Counters() const;

  // Whether a stage failure is the node's (its disk, its cache directory)
  // rather than the job's (its files, its quota).
  static bool IsNodeFault(const absl::Status& status);

 private:
  using Key =
      std::tuple<uid_t, std::string, std::string>;  // uid, name, version

  // What a stage leaves pinned: nothing (job 0), the job until Release
  // (until_ms 0), or a hold for the job that lapses at until_ms.
  struct Pin {
    uint64_t job = 0;
    int64_t until_ms = 0;
    // A job's own launch: its hit or miss counts (a prefetch's does not:
    // the counters say how often jobs found their data; its bytes count).
    bool launch = false;
  };

  struct Entry {
    uint64_t bytes = 0;
    int64_t last_use_ms = 0;
    std::set<uint64_t> jobs;
    // Jobs staged ahead for, and when each hold lapses.
    std::map<uint64_t, int64_t> holds;
    bool staging = false;  // being copied: counted, never evicted
    std::string source;
    // What jobs called it (--dataset=NAME:...): the name its entry and
    // record are filed under first, then any other name a job staged the
    // same source under since the agent started. Evict takes any of them.
    std::set<std::string> names;
    // A finished copy whose fingerprint is known; otherwise a copy was
    // started (ENTRY.partial, resumable), counted at its full size.
    bool complete = false;
    // Its files changed since they were fingerprinted: never served, and
    // dropped once no running job uses it (a hold alone does not keep it);
    // charged at least what it holds.
    bool tainted = false;
    uint64_t measured_bytes = 0;  // blocks held, when tainted or partial
    uint64_t files = 0;
    std::string fingerprint;
    // Stages of a newer version reading their unchanged files from it
    // now: never evicted or removed meanwhile.
    int copy_sources = 0;
  };

  DatasetCache(DatasetCacheOptions options, DatasetWorker& worker,
               Clock& clock);
  absl::Status Load();
  // The entry of `source` at `version` for `uid` if one is known, under
  // whichever name it was staged; else (uid, name, version).
  Key KeyFor(uid_t uid, const std::string& name, const std::string& source,
             const std::string& version) const;
  // Whether `other` is another version (or copy) of the dataset `key`
  // stages: the same owner and source directory, whatever its name.
  static bool SameDataset(const Key& other, const Entry& other_entry,
                          const Key& key, const std::string& source);
  absl::StatusOr<StagedDataset> StageAndPin(const Pin& pin,
                                            const DatasetUser& user,
                                            const std::string& name,
                                            const std::string& source,
                                            const StageProgress& progress,
                                            DatasetVersionBy version_by);
  // Applies `pin` to the entry `key` (and drops the job's holds on other
  // versions of the dataset: the job has what it needs).
  void PinEntry(const Key& key, const Pin& pin)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Pinned counts every hold, lapsed or not: DropLapsedHolds first. Like
  // PinningJobs, it reads one of entries_, so the lock is held.
  void DropLapsedHolds() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  static bool Pinned(const Entry& entry) {
    return !entry.jobs.empty() || !entry.holds.empty() ||
           entry.copy_sources > 0;
  }
  // The jobs pinning or holding `entry` whose holds have not lapsed.
  std::set<uint64_t> PinningJobs(const Entry& entry) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Checks uid's directory against the books (see the top of the file);
  // with `only`, just that complete entry's files.
  void Audit(uid_t uid, const std::optional<Key>& only = std::nullopt);
  // Every uid with a directory or an entry.
  std::vector<uid_t> KnownUids() const;
  // Drops `key`: its record first, then its files (entry and partial copy)
  // as `owner`.
  void Forget(const Key& key, const DatasetUser& owner)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Writes `key`'s record from its entry.
  absl::Status WriteRecord(const Key& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // What `entry` counts for: its size, or what it holds if more.
  static uint64_t Charge(const Entry& entry);
  uint64_t TotalBytes() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  absl::StatusOr<std::string> UserDirectory(const DatasetUser& user);
  std::string EntryPath(const Key& key) const;
  // Frees room for `bytes` more for `uid`.
  absl::Status MakeRoom(uid_t uid, uint64_t bytes, MutexLock& lock,
                        const DatasetUser& user)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  uint64_t UserBytes(uid_t uid) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // How to act as the owner of uid's entries, for removing them.
  DatasetUser OwnerOf(uid_t uid) const;
  void Touch(const Key& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const DatasetCacheOptions options_;
  DatasetWorker& worker_;
  Clock& clock_;
  mutable Mutex mutex_;
  CondVar changed_;
  std::string records_dir_;  // ROOT/.records, set by Open
  std::map<Key, Entry> entries_ ABSL_GUARDED_BY(mutex_);
  // Blocks held in a user's directory by files the cache does not know and
  // could not remove.
  std::map<uid_t, uint64_t> stray_bytes_ ABSL_GUARDED_BY(mutex_);
  // Unknown names in a user's directory being removed by an audit: a
  // stage waits for them before it copies under such a name.
  std::set<std::pair<uid_t, std::string>> removing_ ABSL_GUARDED_BY(mutex_);
  DatasetCacheCounters counters_ ABSL_GUARDED_BY(mutex_);
  uint64_t generation_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace gantry::agent
