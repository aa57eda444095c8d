// DatasetCache: what it trusts after a restart and between stages (the
// records under ROOT/.records, and the audit of each user's directory
// against them). See dataset_cache.h.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/datasets/dataset_cache.h"
#include "agent/datasets/dataset_measure.h"
#include "agent/datasets/dataset_record.h"
#include "agent/system/scoped_fd.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "common/mutex.h"

namespace gantry::agent {
namespace {

// The names in the directory `fd`, at most kMaxDatasetEntries of them.
std::vector<std::string> Names(int fd) {
  std::vector<std::string> names;
  const int listing_fd = dup(fd);
  if (listing_fd < 0) return names;
  DIR* dir = fdopendir(listing_fd);
  if (dir == nullptr) {
    close(listing_fd);
    return names;
  }
  while (struct dirent* item = readdir(dir)) {
    const std::string name = item->d_name;
    if (name != "." && name != "..") names.push_back(name);
    if (names.size() >= kMaxDatasetEntries) break;
  }
  closedir(dir);
  return names;
}

std::string EntryName(const std::string& name, const std::string& version) {
  return absl::StrCat(name, ".", version);
}

}  // namespace

uint64_t DatasetCache::Charge(const Entry& entry) {
  return std::max(entry.bytes, entry.measured_bytes);
}

uint64_t DatasetCache::TotalBytes() const {
  uint64_t total = 0;
  for (const auto& [key, entry] : entries_) total += Charge(entry);
  for (const auto& [uid, bytes] : stray_bytes_) total += bytes;
  return total;
}

absl::Status DatasetCache::WriteRecord(const Key& key) {
  const Entry& entry = entries_.at(key);
  DatasetRecord record;
  record.uid = std::get<0>(key);
  record.name = std::get<1>(key);
  record.version = std::get<2>(key);
  record.complete = entry.complete;
  record.source = entry.source;
  record.bytes = entry.bytes;
  record.files = entry.files;
  record.last_use_ms = entry.last_use_ms;
  record.fingerprint = entry.fingerprint;
  return WriteDatasetRecord(records_dir_, record);
}

void DatasetCache::Forget(const Key& key, const DatasetUser& owner) {
  entries_.erase(key);
  ++generation_;
  if (absl::Status status = RemoveDatasetRecord(
          records_dir_, std::get<0>(key), std::get<1>(key), std::get<2>(key));
      !status.ok()) {
    log::Warn("dataset cache: cannot remove a record",
              {{"error", status.ToString()}});
  }
  CrashPoint("agent.dataset.after_unrecord_before_remove");
  // Whatever is left (a failed removal) is unknown to the next audit,
  // which removes it again or charges it.
  const std::string entry = EntryPath(key);
  for (const std::string& path : {entry, DatasetPartialPath(entry)}) {
    struct stat st {};
    if (lstat(path.c_str(), &st) == 0) (void)worker_.Remove(owner, path);
  }
}

std::vector<uid_t> DatasetCache::KnownUids() const {
  std::set<uid_t> uids;
  ScopedFd root(open(options_.root.c_str(),
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (root.get() >= 0) {
    for (const std::string& name : Names(root.get())) {
      uint32_t uid = 0;
      if (absl::SimpleAtoi(name, &uid) && absl::StrCat(uid) == name) {
        uids.insert(uid);
      }
    }
  }
  MutexLock lock(mutex_);
  for (const auto& [key, entry] : entries_) uids.insert(std::get<0>(key));
  return {uids.begin(), uids.end()};
}

absl::Status DatasetCache::Load() {
  absl::StatusOr<std::string> records = OpenDatasetRecords(options_.root);
  if (!records.ok()) return records.status();
  records_dir_ = *records;
  LoadedDatasetRecords loaded = LoadDatasetRecords(records_dir_);
  for (const std::string& dropped : loaded.dropped) {
    log::Warn("dataset cache: dropped a corrupt or unfinished record",
              {{"record", dropped}});
  }
  {
    MutexLock lock(mutex_);
    for (const DatasetRecord& record : loaded.records) {
      Entry& entry = entries_[{record.uid, record.name, record.version}];
      entry.bytes = record.bytes;
      entry.files = record.files;
      entry.last_use_ms = record.last_use_ms;
      entry.source = record.source;
      entry.names.insert(record.name);
      entry.complete = record.complete;
      entry.fingerprint = record.fingerprint;
    }
  }
  for (uid_t uid : KnownUids()) Audit(uid);
  return absl::OkStatus();
}

void DatasetCache::Audit(uid_t uid, const std::optional<Key>& only) {
  // What to check, by the name it has in the user's directory.
  struct Check {
    Key key;
    bool complete = false;
    std::string fingerprint;
    absl::StatusOr<TreeMeasure> measure = absl::UnknownError("not measured");
  };
  std::vector<Check> checks;
  std::vector<std::string> unknown;
  const std::string dir_path = absl::StrCat(options_.root, "/", uid);
  ScopedFd dir(
      open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  std::vector<std::string> names;
  if (only.has_value()) {
    const std::string name = EntryName(std::get<1>(*only), std::get<2>(*only));
    struct stat st {};
    if (dir.get() >= 0 &&
        fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      names.push_back(name);
    }
  } else if (dir.get() >= 0) {
    names = Names(dir.get());
  }
  {
    // Sorted under the lock. A stage registers its copy under the lock
    // before the copy creates any file: registered by now, its names are
    // busy here; registered later, it waits (removing_) until what was
    // listed under its names before it is removed.
    MutexLock lock(mutex_);
    std::map<std::string, Key> known;
    std::set<std::string> busy;
    for (const auto& [key, entry] : entries_) {
      if (std::get<0>(key) != uid || (only.has_value() && key != *only)) {
        continue;
      }
      const std::string name = EntryName(std::get<1>(key), std::get<2>(key));
      const std::string partial = DatasetPartialPath(name);
      if (entry.staging) {
        busy.insert(name);
        busy.insert(partial);
      } else {
        known[entry.complete ? name : partial] = key;
      }
    }
    std::set<std::string> present;
    for (const std::string& name : names) {
      present.insert(name);
      if (busy.count(name) || removing_.count({uid, name})) continue;
      if (auto it = known.find(name); it != known.end()) {
        const Entry& entry = entries_.at(it->second);
        checks.push_back({it->second, entry.complete, entry.fingerprint});
      } else {
        unknown.push_back(name);
        removing_.insert({uid, name});
      }
    }
    // Entries whose files are gone.
    for (const auto& [name, key] : known) {
      if (present.count(name) == 0) {
        log::Warn("dataset cache: an entry's files are gone",
                  {{"uid", uid}, {"entry", name}});
        Forget(key, OwnerOf(uid));
      }
    }
  }
  for (Check& check : checks) {
    check.measure =
        dir.get() >= 0
            ? MeasureTree(dir.get(), check.complete
                                         ? EntryName(std::get<1>(check.key),
                                                     std::get<2>(check.key))
                                         : DatasetPartialPath(EntryName(
                                               std::get<1>(check.key),
                                               std::get<2>(check.key))))
            : absl::NotFoundError("no directory");
  }
  // Removed as their owner: the user's directory is theirs to shape, and
  // root must not walk a tree a user can change under it to delete it.
  const DatasetUser owner = OwnerOf(uid);
  uint64_t stray = 0;
  if (!unknown.empty()) CrashPoint("agent.dataset.before_unknown_removed");
  for (const std::string& name : unknown) {
    log::Info("dataset cache: removing what it does not know",
              {{"uid", uid}, {"name", name}});
    (void)worker_.Remove(owner, dir_path + "/" + name);
    if (dir.get() < 0) continue;
    absl::StatusOr<TreeMeasure> left = MeasureTree(dir.get(), name);
    if (left.ok()) {
      // Unmeasurable past the bounds: charge the whole cache, so the user
      // stages nothing more until it is gone.
      stray += left->bounded ? left->allocated_bytes : options_.capacity_bytes;
    }
  }
  MutexLock lock(mutex_);
  for (const std::string& name : unknown) removing_.erase({uid, name});
  changed_.NotifyAll();
  if (!only.has_value()) {
    if (stray_bytes_[uid] != stray) ++generation_;
    stray_bytes_[uid] = stray;
    if (stray == 0) stray_bytes_.erase(uid);
  }
  for (Check& check : checks) {
    auto it = entries_.find(check.key);
    // Restaged or dropped while it was measured: the next audit sees it.
    if (it == entries_.end() || it->second.staging ||
        it->second.complete != check.complete ||
        it->second.fingerprint != check.fingerprint) {
      continue;
    }
    Entry& entry = it->second;
    const absl::StatusOr<TreeMeasure>& measure = check.measure;
    const bool sound = measure.ok() && measure->bounded && measure->plain;
    if (sound && !entry.complete) {
      entry.measured_bytes = measure->allocated_bytes;
      continue;
    }
    if (sound && measure->fingerprint == entry.fingerprint) continue;
    // No running job uses it: dropped, also when it is held for a waiting
    // job (staged ahead), which then copies it afresh.
    if (entry.jobs.empty()) {
      log::Warn(
          "dataset cache: dropping a copy whose files changed",
          {{"uid", uid},
           {"entry", EntryPath(check.key)},
           {"why", measure.ok() ? "changed" : measure.status().ToString()}});
      Forget(check.key, owner);
      continue;
    }
    if (!entry.tainted) {
      log::Warn("dataset cache: a copy in use changed; dropped when unused",
                {{"uid", uid}, {"entry", EntryPath(check.key)}});
      entry.tainted = true;
      ++generation_;
    }
    entry.measured_bytes = measure.ok() && measure->bounded
                               ? measure->allocated_bytes
                               : options_.capacity_bytes;
  }
}

}  // namespace gantry::agent
