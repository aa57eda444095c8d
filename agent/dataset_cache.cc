#include "agent/dataset_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gantry::agent {
namespace {

constexpr size_t kVersionChars = 32;

absl::Status LocalCacheError(const std::string& what, const std::string& path,
                             int error) {
  return absl::InternalError(absl::StrCat("local cache: ", what, " ", path,
                                          ": ", std::strerror(error)));
}

// The names in the directory `path` (none when it cannot be read). Only
// ever ROOT and ROOT/<uid>, whose entries users cannot replace (ROOT is
// root's).
std::vector<std::string> DirectoryNames(const std::string& path) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// "imagenet.0123...": the name and the version, or nullopt for anything
// else (a partial copy, a stray file).
std::optional<std::pair<std::string, std::string>> SplitEntryName(
    const std::string& text) {
  const size_t dot = text.rfind('.');
  if (dot == std::string::npos || dot == 0 ||
      text.size() - dot - 1 != kVersionChars) {
    return std::nullopt;
  }
  const std::string version = text.substr(dot + 1);
  if (!std::all_of(version.begin(), version.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      })) {
    return std::nullopt;
  }
  return std::make_pair(text.substr(0, dot), version);
}

}  // namespace

absl::StatusOr<DatasetManifest> InProcessDatasetWorker::Scan(
    const DatasetUser&, const std::string& source) {
  return ScanDatasetTree(source);
}

absl::StatusOr<CopyResult> InProcessDatasetWorker::Copy(
    const DatasetUser&, const std::string& source, const std::string& version,
    const std::string& entry, const StageProgress& progress) {
  absl::StatusOr<DatasetManifest> manifest = ScanDatasetTree(source);
  if (!manifest.ok()) return manifest.status();
  if (manifest->version != version) {
    return absl::AbortedError(
        absl::StrCat(source, " changed while the dataset was being staged"));
  }
  return CopyDatasetTree(source, *manifest, entry, progress);
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

absl::Status DatasetCache::Load() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::string& user_name : DirectoryNames(options_.root)) {
    uint32_t uid = 0;
    if (!absl::SimpleAtoi(user_name, &uid)) continue;
    const std::string user_dir = options_.root + "/" + user_name;
    for (const std::string& entry_name : DirectoryNames(user_dir)) {
      auto split = SplitEntryName(entry_name);
      if (!split.has_value()) continue;  // partial copies resume or go
      const std::string path = user_dir + "/" + entry_name;
      absl::StatusOr<uint64_t> bytes = CompleteDatasetBytes(path);
      if (!bytes.ok()) continue;
      struct stat st {};
      int64_t last_use_ms = 0;
      if (lstat(path.c_str(), &st) == 0) {
        last_use_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 +
                      st.st_mtim.tv_nsec / 1'000'000;
      }
      Entry& entry = entries_[{uid, split->first, split->second}];
      entry.bytes = *bytes;
      entry.last_use_ms = last_use_ms;
    }
  }
  return absl::OkStatus();
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
    if (std::get<0>(key) == uid) total += entry.bytes;
  }
  return total;
}

uint64_t DatasetCache::UsedBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t total = 0;
  for (const auto& [key, entry] : entries_) total += entry.bytes;
  return total;
}

DatasetCacheCounters DatasetCache::Counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counters_;
}

void DatasetCache::Touch(const Key& key) {
  Entry& entry = entries_[key];
  ++generation_;
  entry.last_use_ms = clock_.NowMs();
  // Kept on disk as the entry's mtime, so a restarted agent keeps the
  // order; the link itself, never what it might point to.
  const struct timespec times[2] = {
      {entry.last_use_ms / 1000, (entry.last_use_ms % 1000) * 1'000'000},
      {entry.last_use_ms / 1000, (entry.last_use_ms % 1000) * 1'000'000}};
  utimensat(AT_FDCWD, EntryPath(key).c_str(), times, AT_SYMLINK_NOFOLLOW);
}

absl::Status DatasetCache::MakeRoom(uid_t uid, uint64_t bytes,
                                    std::unique_lock<std::mutex>&,
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
  uint64_t used = 0;
  for (const auto& [key, entry] : entries_) used += entry.bytes;
  uint64_t user_used = UserBytes(uid);
  std::vector<Key> victims;
  // The user's own entries first when the user is over their limit.
  for (const auto& [time, key] : order) {
    if (options_.per_user_bytes == 0) break;
    if (user_used + bytes <= user_limit) break;
    if (std::get<0>(key) != uid) continue;
    victims.push_back(key);
    user_used -= entries_[key].bytes;
    used -= entries_[key].bytes;
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
    used -= entries_[key].bytes;
  }
  if (used + bytes > options_.capacity_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the cache needs ", bytes, " bytes more; ", used,
                     " of its ", options_.capacity_bytes,
                     " bytes are in use by running or starting jobs"));
  }
  for (const Key& key : victims) {
    const uint64_t freed = entries_[key].bytes;
    entries_.erase(key);
    ++generation_;
    counters_.bytes_evicted += freed;
    ++counters_.evictions;
    (void)worker_.Remove(
        std::get<0>(key) == user.uid ? user : OwnerOf(std::get<0>(key)),
        EntryPath(key));
  }
  return absl::OkStatus();
}

absl::StatusOr<StagedDataset> DatasetCache::Stage(
    uint64_t job, const DatasetUser& user, const std::string& name,
    const std::string& source, const StageProgress& progress) {
  return StageAndPin({job, 0, /*launch=*/true}, user, name, source, progress);
}

absl::StatusOr<StagedDataset> DatasetCache::Prefetch(
    uint64_t job, int64_t hold_until_ms, const DatasetUser& user,
    const std::string& name, const std::string& source,
    const StageProgress& progress) {
  // A hold that has already lapsed pins nothing; 0 would mean "no limit".
  const Pin pin =
      job == 0 ? Pin{} : Pin{job, std::max<int64_t>(hold_until_ms, 1)};
  return StageAndPin(pin, user, name, source, progress);
}

absl::StatusOr<StagedDataset> DatasetCache::StageAndPin(
    const Pin& pin, const DatasetUser& user, const std::string& name,
    const std::string& source, const StageProgress& progress) {
  absl::StatusOr<std::string> user_dir = UserDirectory(user);
  if (!user_dir.ok()) return user_dir.status();
  absl::StatusOr<DatasetManifest> manifest = worker_.Scan(user, source);
  if (!manifest.ok()) return manifest.status();
  const Key key{user.uid, name, manifest->version};
  StagedDataset staged;
  staged.local_path = DatasetDataPath(EntryPath(key));
  staged.version = manifest->version;
  staged.bytes_total = manifest->total_bytes;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] {
      auto it = entries_.find(key);
      return it == entries_.end() || !it->second.staging;
    });
    if (auto it = entries_.find(key); it != entries_.end()) {
      PinEntry(key, pin);
      it->second.source = source;
      Touch(key);
      if (pin.launch) ++counters_.hits;
      staged.hit = true;
      return staged;
    }
    if (absl::Status room =
            MakeRoom(user.uid, manifest->total_bytes, lock, user);
        !room.ok()) {
      return room;
    }
    Entry& entry = entries_[key];
    entry.bytes = manifest->total_bytes;
    entry.staging = true;
  }
  // A partial copy of another version can never be resumed.
  for (const std::string& other : DirectoryNames(*user_dir)) {
    const std::string suffix = ".partial";
    if (other.size() <= suffix.size() ||
        other.compare(other.size() - suffix.size(), suffix.size(), suffix)) {
      continue;
    }
    auto split = SplitEntryName(other.substr(0, other.size() - suffix.size()));
    if (split && split->first == name && split->second != manifest->version) {
      (void)worker_.Remove(user, *user_dir + "/" + other);
    }
  }
  absl::StatusOr<CopyResult> copied =
      worker_.Copy(user, source, manifest->version, EntryPath(key), progress);
  std::vector<Key> superseded;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& entry = entries_[key];
    entry.staging = false;
    changed_.notify_all();
    if (!copied.ok() && !absl::IsAlreadyExists(copied.status())) {
      entries_.erase(key);
      return copied.status();
    }
    PinEntry(key, pin);
    entry.source = source;
    Touch(key);
    if (pin.launch) ++counters_.misses;
    if (copied.ok()) {
      staged.bytes_copied = copied->bytes_copied;
      staged.bytes_resumed = copied->bytes_resumed;
      counters_.bytes_staged += copied->bytes_copied;
    }
    DropLapsedHolds();
    for (auto& [other, other_entry] : entries_) {
      if (std::get<0>(other) == user.uid && std::get<1>(other) == name &&
          other != key && !Pinned(other_entry) && !other_entry.staging) {
        superseded.push_back(other);
      }
    }
    for (const Key& old : superseded) {
      counters_.bytes_evicted += entries_[old].bytes;
      ++counters_.evictions;
      entries_.erase(old);
    }
  }
  for (const Key& old : superseded) (void)worker_.Remove(user, EntryPath(old));
  return staged;
}

void DatasetCache::PinEntry(const Key& key, const Pin& pin) {
  if (pin.job == 0) return;
  Entry& entry = entries_[key];
  ++generation_;
  if (pin.until_ms == 0) {
    entry.jobs.insert(pin.job);
    // The job's own stage: whatever was held for it ahead is its now, or
    // (another version) no longer needed.
    for (auto& [other, other_entry] : entries_) {
      if (std::get<0>(other) == std::get<0>(key) &&
          std::get<1>(other) == std::get<1>(key)) {
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
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [key, entry] : entries_) {
    // Counted as a change: the listing names the pinning jobs.
    if (entry.jobs.erase(job) + entry.holds.erase(job) > 0) ++generation_;
  }
}

void DatasetCache::ExpireHolds() {
  std::lock_guard<std::mutex> lock(mutex_);
  DropLapsedHolds();
}

absl::Status DatasetCache::Evict(uid_t uid, const std::string& name) {
  std::vector<Key> victims;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    DropLapsedHolds();
    bool any = false;
    for (const auto& [key, entry] : entries_) {
      if (std::get<0>(key) != uid || std::get<1>(key) != name) continue;
      any = true;
      if (entry.staging) {
        return absl::FailedPreconditionError(absl::StrCat(
            "dataset ", name, " of uid ", uid, " is being staged"));
      }
      if (Pinned(entry)) {
        const std::set<uint64_t> jobs = PinningJobs(entry);
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
    for (const Key& key : victims) {
      counters_.bytes_evicted += entries_[key].bytes;
      ++counters_.evictions;
      entries_.erase(key);
      ++generation_;
    }
  }
  const DatasetUser owner = OwnerOf(uid);
  for (const Key& key : victims) {
    if (absl::Status status = worker_.Remove(owner, EntryPath(key));
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

std::vector<CachedDataset> DatasetCache::List() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<CachedDataset> list;
  for (const auto& [key, entry] : entries_) {
    if (entry.staging) continue;
    list.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key),
                    entry.bytes, entry.last_use_ms, PinningJobs(entry),
                    entry.source});
  }
  return list;
}

uint64_t DatasetCache::Generation() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return generation_;
}

bool DatasetCache::IsNodeFault(const absl::Status& status) {
  return absl::IsInternal(status);
}

}  // namespace gantry::agent
