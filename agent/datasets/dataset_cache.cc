#include "agent/datasets/dataset_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/datasets/dataset_measure.h"
#include "common/crash_point.h"
#include "common/dataset_spec.h"
#include "common/log.h"

namespace gantry::agent {
namespace {

absl::Status LocalCacheError(const std::string& what, const std::string& path,
                             int error) {
  return absl::InternalError(absl::StrCat("local cache: ", what, " ", path,
                                          ": ", std::strerror(error)));
}

// Whether `measure` of `entry` is exactly the copy of `manifest`: its
// files, plus the completion manifest the copy writes beside them.
absl::Status CheckCopy(const absl::StatusOr<TreeMeasure>& measure,
                       const DatasetManifest& manifest,
                       const std::string& entry) {
  struct stat st {};
  const std::string completion = DatasetCompletionPath(entry);
  if (measure.ok() && measure->bounded && measure->plain &&
      lstat(completion.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      measure->files == manifest.file_count + 1 &&
      measure->file_bytes ==
          manifest.total_bytes + static_cast<uint64_t>(st.st_size)) {
    return absl::OkStatus();
  }
  return absl::AbortedError(absl::StrCat(
      "the copy in ", entry, " was changed while the dataset was staged"));
}

}  // namespace

absl::StatusOr<DatasetManifest> InProcessDatasetWorker::Scan(
    const DatasetUser&, const std::string& source,
    DatasetVersionBy version_by) {
  return ScanDatasetTree(source, version_by);
}

absl::StatusOr<CopyResult> InProcessDatasetWorker::Copy(
    const DatasetUser&, const std::string& source, const std::string& version,
    DatasetVersionBy version_by, const std::string& entry,
    const std::string& earlier_entry, const StageProgress& progress) {
  // The tree is listed again to copy what is there now. A metadata version
  // is checked here; a content version from the digests the copy takes,
  // so that the tree is not read twice.
  absl::StatusOr<DatasetManifest> manifest = ScanDatasetTree(source);
  if (!manifest.ok()) return manifest.status();
  const bool by_content = version_by == DatasetVersionBy::kContent;
  if (!by_content && manifest->version != version) {
    return absl::AbortedError(
        absl::StrCat(source, " changed while the dataset was being staged"));
  }
  if (by_content) manifest->version = version;  // what the manifest records
  // Nothing is taken from an earlier version by content: a file of the
  // same size and mtime may hold other bytes (that is why content versions
  // exist), and only reading the source tells.
  return CopyDatasetTree(
      source, *manifest, entry, progress,
      {.earlier_entry = by_content ? std::string() : earlier_entry,
       .content_version = by_content ? version : std::string()});
}

absl::Status InProcessDatasetWorker::Remove(const DatasetUser&,
                                            const std::string& path) {
  std::error_code error;
  std::filesystem::remove_all(path, error);
  if (error) {
    return absl::InternalError(absl::StrCat("local cache: cannot remove ", path,
                                            ": ", error.message()));
  }
  return absl::OkStatus();
}

DatasetCache::DatasetCache(DatasetCacheOptions options, DatasetWorker& worker,
                           Clock& clock)
    : options_(std::move(options)), worker_(worker), clock_(clock) {}

absl::StatusOr<std::unique_ptr<DatasetCache>> DatasetCache::Open(
    DatasetCacheOptions options, DatasetWorker& worker, Clock& clock) {
  if (options.root.empty() || options.root[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "cache-dir must be an absolute path, not \"", options.root, "\""));
  }
  if (options.capacity_bytes == 0) {
    return absl::InvalidArgumentError("cache-size must be more than 0");
  }
  if (mkdir(options.root.c_str(), 0711) != 0 && errno != EEXIST) {
    return LocalCacheError("cannot create", options.root, errno);
  }
  struct stat st {};
  if (lstat(options.root.c_str(), &st) != 0) {
    return LocalCacheError("cannot use", options.root, errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InternalError(
        absl::StrCat("local cache: ", options.root, " is not a directory"));
  }
  if (st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    // Another user could plant or swap per-user directories in it.
    return absl::InternalError(absl::StrCat(
        "local cache: ", options.root,
        " must be owned by the agent's user and writable by no one else"));
  }
  std::unique_ptr<DatasetCache> cache(
      new DatasetCache(std::move(options), worker, clock));
  if (absl::Status status = cache->Load(); !status.ok()) return status;
  return cache;
}

std::string DatasetCache::EntryPath(const Key& key) const {
  return absl::StrCat(options_.root, "/", std::get<0>(key), "/",
                      std::get<1>(key), ".", std::get<2>(key));
}

absl::StatusOr<std::string> DatasetCache::UserDirectory(
    const DatasetUser& user) {
  const std::string path = absl::StrCat(options_.root, "/", user.uid);
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return LocalCacheError("cannot create", path, errno);
  }
  // Opened without following a link, then fixed by descriptor: whatever
  // happened to it, it is the user's own directory, 0700, from here on.
  const int fd =
      open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return LocalCacheError("cannot use", path, errno);
  int failed = 0;
  if (user.switch_user && fchown(fd, user.uid, user.gid) != 0) failed = errno;
  if (failed == 0 && fchmod(fd, 0700) != 0) failed = errno;
  close(fd);
  if (failed != 0) return LocalCacheError("cannot secure", path, failed);
  return path;
}

DatasetUser DatasetCache::OwnerOf(uid_t uid) const {
  // The owner's credentials remove an entry: the tree is theirs to shape,
  // and root must not walk a tree a user can change under it.
  DatasetUser owner;
  owner.uid = uid;
  owner.name = absl::StrCat("uid ", uid);
  owner.switch_user = geteuid() == 0 && uid != 0;
  struct stat st {};
  const std::string dir = absl::StrCat(options_.root, "/", uid);
  owner.gid = lstat(dir.c_str(), &st) == 0 ? st.st_gid : getegid();
  return owner;
}

uint64_t DatasetCache::UserBytes(uid_t uid) const {
  uint64_t total = 0;
  for (const auto& [key, entry] : entries_) {
    if (std::get<0>(key) == uid) total += Charge(entry);
  }
  if (auto it = stray_bytes_.find(uid); it != stray_bytes_.end()) {
    total += it->second;
  }
  return total;
}

uint64_t DatasetCache::UsedBytes() const {
  MutexLock lock(mutex_);
  return TotalBytes();
}

DatasetCacheCounters DatasetCache::Counters() const {
  MutexLock lock(mutex_);
  return counters_;
}

void DatasetCache::Touch(const Key& key) {
  Entry& entry = entries_[key];
  ++generation_;
  entry.last_use_ms = clock_.NowMs();
  // Kept in the entry's record, so a restarted agent keeps the order.
  if (absl::Status status = WriteRecord(key); !status.ok()) {
    log::Warn("dataset cache: cannot record a use",
              {{"error", status.ToString()}});
  }
}

absl::Status DatasetCache::MakeRoom(uid_t uid, uint64_t bytes, MutexLock&,
                                    const DatasetUser& user) {
  const uint64_t user_limit = options_.per_user_bytes == 0
                                  ? options_.capacity_bytes
                                  : options_.per_user_bytes;
  if (bytes > user_limit || bytes > options_.capacity_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the dataset is ", bytes, " bytes; the cache holds at most ",
        std::min(user_limit, options_.capacity_bytes), " bytes for user ",
        user.name));
  }
  DropLapsedHolds();
  // Candidates in least-recently-used order; pinned and copying ones never.
  std::vector<std::pair<int64_t, Key>> order;
  for (const auto& [key, entry] : entries_) {
    if (!Pinned(entry) && !entry.staging) {
      order.emplace_back(entry.last_use_ms, key);
    }
  }
  std::sort(order.begin(), order.end());
  uint64_t used = TotalBytes();
  uint64_t user_used = UserBytes(uid);
  std::vector<Key> victims;
  // The user's own entries first when the user is over their limit.
  for (const auto& [time, key] : order) {
    if (options_.per_user_bytes == 0) break;
    if (user_used + bytes <= user_limit) break;
    if (std::get<0>(key) != uid) continue;
    victims.push_back(key);
    user_used -= Charge(entries_[key]);
    used -= Charge(entries_[key]);
  }
  if (options_.per_user_bytes != 0 && user_used + bytes > user_limit) {
    return absl::ResourceExhaustedError(
        absl::StrCat("user ", user.name, "'s datasets in the cache would take ",
                     user_used + bytes, " bytes, above the per-user limit of ",
                     user_limit, " bytes; the rest is in use by running jobs"));
  }
  for (const auto& [time, key] : order) {
    if (used + bytes <= options_.capacity_bytes) break;
    if (std::find(victims.begin(), victims.end(), key) != victims.end()) {
      continue;
    }
    victims.push_back(key);
    used -= Charge(entries_[key]);
  }
  if (used + bytes > options_.capacity_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the cache needs ", bytes, " bytes more; ", used,
                     " of its ", options_.capacity_bytes,
                     " bytes are in use by running or starting jobs"));
  }
  for (const Key& key : victims) {
    counters_.bytes_evicted += entries_[key].bytes;
    ++counters_.evictions;
    Forget(key,
           std::get<0>(key) == user.uid ? user : OwnerOf(std::get<0>(key)));
  }
  return absl::OkStatus();
}

absl::StatusOr<StagedDataset> DatasetCache::Stage(uint64_t job,
                                                  const DatasetUser& user,
                                                  const std::string& name,
                                                  const std::string& source,
                                                  const StageProgress& progress,
                                                  DatasetVersionBy version_by) {
  return StageAndPin({job, 0, /*launch=*/true}, user, name, source, progress,
                     version_by);
}

absl::StatusOr<StagedDataset> DatasetCache::Prefetch(
    uint64_t job, int64_t hold_until_ms, const DatasetUser& user,
    const std::string& name, const std::string& source,
    const StageProgress& progress, DatasetVersionBy version_by) {
  // A hold that has already lapsed pins nothing; 0 would mean "no limit".
  const Pin pin =
      job == 0 ? Pin{} : Pin{job, std::max<int64_t>(hold_until_ms, 1)};
  return StageAndPin(pin, user, name, source, progress, version_by);
}

absl::StatusOr<StagedDataset> DatasetCache::StageAndPin(
    const Pin& pin, const DatasetUser& user, const std::string& name,
    const std::string& source, const StageProgress& progress,
    DatasetVersionBy version_by) {
  // The name becomes a path in the cache.
  if (absl::Status valid = CheckDatasetName(name); !valid.ok()) return valid;
  absl::StatusOr<std::string> user_dir = UserDirectory(user);
  if (!user_dir.ok()) return user_dir.status();
  absl::StatusOr<DatasetManifest> manifest =
      worker_.Scan(user, source, version_by);
  if (!manifest.ok()) return manifest.status();
  const Key key = KeyFor(user.uid, name, source, manifest->version);
  const auto complete = [&] {
    MutexLock lock(mutex_);
    auto it = entries_.find(key);
    return it != entries_.end() && it->second.complete;
  };
  // A hit's files are checked before they are served (a changed copy is
  // dropped, or marked while a job uses it). Room is made within the
  // user's limit and the node's capacity only once every user's directory
  // counts as it really is.
  if (complete()) Audit(user.uid, key);
  if (!complete()) {
    for (uid_t uid : KnownUids()) Audit(uid);
  }
  const std::string entry_path = EntryPath(key);
  const std::string entry_name =
      absl::StrCat(std::get<1>(key), ".", manifest->version);
  std::optional<Key>
      earlier;  // the version the copy reads unchanged files from
  StagedDataset staged;
  staged.local_path = DatasetDataPath(entry_path);
  staged.version = manifest->version;
  staged.bytes_total = manifest->total_bytes;
  {
    MutexLock lock(mutex_);
    changed_.Wait(lock, [&] {
      mutex_.AssertHeld();
      auto it = entries_.find(key);
      return (it == entries_.end() || !it->second.staging) &&
             removing_.count({user.uid, entry_name}) == 0 &&
             removing_.count({user.uid, DatasetPartialPath(entry_name)}) == 0;
    });
    if (auto it = entries_.find(key);
        it != entries_.end() && it->second.complete) {
      if (it->second.tainted) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the cached copy of dataset ", name, " (", entry_path,
            ") was changed while a job used it; it is staged again once no "
            "job uses it"));
      }
      PinEntry(key, pin);
      it->second.names.insert(name);
      Touch(key);
      if (pin.launch) ++counters_.hits;
      staged.hit = true;
      return staged;
    }
    // A partial copy of another version can never be resumed.
    std::vector<Key> stale;
    for (const auto& [other, other_entry] : entries_) {
      if (SameDataset(other, other_entry, key, source) &&
          !other_entry.complete && !other_entry.staging) {
        stale.push_back(other);
      }
    }
    for (const Key& old : stale) Forget(old, user);
    // A partial copy of this version is resumed: set aside while room is
    // made (neither counted twice nor evicted for itself), its files kept.
    std::optional<Entry> partial;
    if (auto it = entries_.find(key); it != entries_.end()) {
      partial = std::move(it->second);
      entries_.erase(it);
    }
    if (absl::Status room =
            MakeRoom(user.uid, manifest->total_bytes, lock, user);
        !room.ok()) {
      if (partial.has_value()) entries_[key] = std::move(*partial);
      return room;
    }
    Entry& entry = entries_[key];
    entry.bytes = manifest->total_bytes;
    entry.files = manifest->file_count;
    entry.staging = true;
    entry.source = source;
    entry.names.insert(name);
    entry.last_use_ms = clock_.NowMs();
    if (absl::Status recorded = WriteRecord(key); !recorded.ok()) {
      entries_.erase(key);
      changed_.NotifyAll();
      return recorded;
    }
    // The most recent complete version still here once room was made: the
    // files that did not change are copied from it, not from the source.
    for (auto& [other, other_entry] : entries_) {
      if (SameDataset(other, other_entry, key, source) &&
          other_entry.complete && !other_entry.tainted &&
          !other_entry.staging &&
          (!earlier.has_value() ||
           other_entry.last_use_ms > entries_[*earlier].last_use_ms)) {
        earlier = other;
      }
    }
    if (earlier.has_value()) ++entries_[*earlier].copy_sources;
  }
  CrashPoint("agent.dataset.after_partial_record");
  // This version is not complete, so whatever has its name is not a copy of
  // the cache's: it would pass for one, or block the copy's final rename.
  struct stat st {};
  if (lstat(entry_path.c_str(), &st) == 0) {
    (void)worker_.Remove(user, entry_path);
  }
  absl::StatusOr<CopyResult> copied = worker_.Copy(
      user, source, manifest->version, version_by, entry_path,
      earlier.has_value() ? EntryPath(*earlier) : std::string(), progress);
  CrashPoint("agent.dataset.after_copy_before_record");
  // Measured by the agent, not read from the copy: it must hold exactly
  // the files scanned, and its fingerprint is what later stages and a
  // restarted agent check it against.
  absl::StatusOr<TreeMeasure> measure = absl::UnknownError("not copied");
  absl::Status verified = copied.status();
  // A failed copy never makes ENTRY: if it is there, the user made it.
  const bool foreign = !copied.ok() && lstat(entry_path.c_str(), &st) == 0;
  if (copied.ok()) {
    measure = MeasureSettledTree(entry_path);
    verified = CheckCopy(measure, *manifest, entry_path);
  } else if (foreign) {
    verified = absl::AbortedError(absl::StrCat(
        entry_path, " appeared while the dataset was being staged"));
  }
  std::vector<Key> superseded;
  MutexLock lock(mutex_);
  Entry& entry = entries_[key];
  entry.staging = false;
  if (earlier.has_value()) {
    if (auto it = entries_.find(*earlier); it != entries_.end()) {
      --it->second.copy_sources;
    }
  }
  changed_.NotifyAll();
  if (!verified.ok()) {
    if (copied.ok() || foreign) {
      // What is on disk is not the copy made: never served.
      Forget(key, user);
    }
    // Otherwise kept, with its partial record, for the next stage of this
    // version to resume, counted at its full size until then.
    return verified;
  }
  entry.complete = true;
  entry.fingerprint = measure->fingerprint;
  PinEntry(key, pin);
  Touch(key);
  if (pin.launch) ++counters_.misses;
  staged.bytes_copied = copied->bytes_copied;
  staged.bytes_resumed = copied->bytes_resumed;
  staged.bytes_reused = copied->bytes_reused;
  counters_.bytes_staged += copied->bytes_copied;
  DropLapsedHolds();
  for (auto& [other, other_entry] : entries_) {
    if (SameDataset(other, other_entry, key, source) && !Pinned(other_entry) &&
        !other_entry.staging) {
      superseded.push_back(other);
    }
  }
  for (const Key& old : superseded) {
    counters_.bytes_evicted += entries_[old].bytes;
    ++counters_.evictions;
    Forget(old, user);
  }
  return staged;
}

DatasetCache::Key DatasetCache::KeyFor(uid_t uid, const std::string& name,
                                       const std::string& source,
                                       const std::string& version) const {
  // The dataset is its owner's source directory, whatever it is called:
  // a copy of this version staged under another name is this one.
  MutexLock lock(mutex_);
  for (const auto& [key, entry] : entries_) {
    if (std::get<0>(key) == uid && std::get<2>(key) == version &&
        entry.source == source) {
      return key;
    }
  }
  return {uid, name, version};
}

bool DatasetCache::SameDataset(const Key& other, const Entry& other_entry,
                               const Key& key, const std::string& source) {
  return other != key && std::get<0>(other) == std::get<0>(key) &&
         other_entry.source == source;
}

void DatasetCache::PinEntry(const Key& key, const Pin& pin) {
  if (pin.job == 0) return;
  Entry& entry = entries_[key];
  ++generation_;
  if (pin.until_ms == 0) {
    entry.jobs.insert(pin.job);
    // The job's own stage: whatever was held for it ahead is its now, or
    // (another version) no longer needed.
    const std::string& source = entry.source;
    for (auto& [other, other_entry] : entries_) {
      if (other == key || SameDataset(other, other_entry, key, source)) {
        other_entry.holds.erase(pin.job);
      }
    }
    return;
  }
  if (entry.jobs.count(pin.job)) return;  // pinned with no time limit
  int64_t& until = entry.holds[pin.job];
  until = std::max(until, pin.until_ms);
}

void DatasetCache::DropLapsedHolds() {
  const int64_t now = clock_.NowMs();
  for (auto& [key, entry] : entries_) {
    for (auto it = entry.holds.begin(); it != entry.holds.end();) {
      if (it->second > now) {
        ++it;
        continue;
      }
      it = entry.holds.erase(it);
      ++generation_;
    }
  }
}

std::set<uint64_t> DatasetCache::PinningJobs(const Entry& entry) const {
  std::set<uint64_t> jobs = entry.jobs;
  const int64_t now = clock_.NowMs();
  for (const auto& [job, until] : entry.holds) {
    if (until > now) jobs.insert(job);
  }
  return jobs;
}

void DatasetCache::Release(uint64_t job) {
  MutexLock lock(mutex_);
  for (auto& [key, entry] : entries_) {
    // Counted as a change: the listing names the pinning jobs.
    if (entry.jobs.erase(job) + entry.holds.erase(job) > 0) ++generation_;
  }
}

void DatasetCache::ExpireHolds() {
  MutexLock lock(mutex_);
  DropLapsedHolds();
}

absl::Status DatasetCache::Evict(uid_t uid, const std::string& name) {
  std::vector<Key> victims;
  {
    MutexLock lock(mutex_);
    DropLapsedHolds();
    bool any = false;
    for (const auto& [key, entry] : entries_) {
      if (std::get<0>(key) != uid || entry.names.count(name) == 0) continue;
      any = true;
      if (entry.staging || entry.copy_sources > 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            "dataset ", name, " of uid ", uid, " is being staged"));
      }
      // Empty only when a hold lapsed since DropLapsedHolds read the clock.
      if (const std::set<uint64_t> jobs = PinningJobs(entry); !jobs.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "dataset ", name, " of uid ", uid, " is in use by job ",
            *jobs.begin(),
            entry.holds.count(*jobs.begin()) ? " (staged ahead for it)" : ""));
      }
      victims.push_back(key);
    }
    if (!any) {
      return absl::NotFoundError(
          absl::StrCat("dataset ", name, " of uid ", uid, " is not cached"));
    }
    const DatasetUser owner = OwnerOf(uid);
    for (const Key& key : victims) {
      counters_.bytes_evicted += entries_[key].bytes;
      ++counters_.evictions;
      Forget(key, owner);
    }
  }
  return absl::OkStatus();
}

std::vector<CachedDataset> DatasetCache::List() const {
  MutexLock lock(mutex_);
  std::vector<CachedDataset> list;
  for (const auto& [key, entry] : entries_) {
    if (entry.staging || !entry.complete) continue;
    list.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key),
                    entry.bytes, entry.last_use_ms, PinningJobs(entry),
                    entry.source});
  }
  return list;
}

uint64_t DatasetCache::Generation() const {
  MutexLock lock(mutex_);
  return generation_;
}

bool DatasetCache::IsNodeFault(const absl::Status& status) {
  return absl::IsInternal(status);
}

}  // namespace gantry::agent
