#include "agent/checkpoint/memory_checkpoint_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/errno_text.h"

namespace gantry::agent {
namespace {

// A directory the agent may keep snapshots under: its own (or root's), a
// real directory, and writable by no one else unless sticky (as /dev/shm),
// where others cannot rename or remove what is the agent's in it.
absl::Status CheckTrusted(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    return absl::UnavailableError(ErrnoText("stat", path.string()));
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path.string(), " is not a directory (a link?)"));
  }
  if (info.st_uid != 0 && info.st_uid != ::geteuid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        path.string(), " belongs to uid ", info.st_uid, ", not the agent"));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
      (info.st_mode & S_ISVTX) == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path.string(), " is writable by others"));
  }
  return absl::OkStatus();
}

std::atomic<uint64_t> incoming_counter{0};

// The complete snapshot steps in `rank_dir`, newest first.
std::vector<int64_t> StepsIn(const std::string& rank_dir) {
  std::vector<int64_t> steps;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(rank_dir, error)) {
    if (std::optional<int64_t> step =
            SnapshotStepOf(entry.path().filename().string());
        step.has_value() && entry.is_directory(error) &&
        !entry.is_symlink(error)) {
      steps.push_back(*step);
    }
  }
  std::sort(steps.rbegin(), steps.rend());
  return steps;
}

// The numbers N of the entries named PREFIX-N in `dir`.
std::vector<uint64_t> NumberedEntries(const std::string& dir,
                                      absl::string_view prefix) {
  std::vector<uint64_t> numbers;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    uint64_t number = 0;
    if (absl::StartsWith(name, prefix) &&
        absl::SimpleAtoi(absl::string_view(name).substr(prefix.size()),
                         &number)) {
      numbers.push_back(number);
    }
  }
  return numbers;
}

absl::Status RemoveNamed(const std::string& parent, const std::string& name) {
  ScopedFd dir(::open(parent.c_str(), kSnapshotDirectoryFlags));
  if (dir.get() < 0) {
    return errno == ENOENT ? absl::OkStatus()
                           : absl::UnavailableError(ErrnoText("open", parent));
  }
  return RemoveSnapshotTree(dir.get(), name);
}

}  // namespace

std::optional<int64_t> SnapshotStepOf(const std::string& name) {
  constexpr absl::string_view kPrefix = "step-";
  int64_t step = -1;
  if (!absl::StartsWith(name, kPrefix)) return std::nullopt;
  const absl::string_view digits =
      absl::string_view(name).substr(kPrefix.size());
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return c >= '0' && c <= '9'; }) ||
      !absl::SimpleAtoi(digits, &step)) {
    return std::nullopt;
  }
  return step;
}

absl::StatusOr<std::unique_ptr<MemoryCheckpointStore>>
MemoryCheckpointStore::Open(const std::string& root, uint64_t job_limit_bytes) {
  const std::filesystem::path path(root);
  if (!path.is_absolute()) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory checkpoint directory ", root, " is not absolute"));
  }
  std::error_code error;
  std::filesystem::create_directories(path / "replicas", error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create memory checkpoint directory ", root, ": ",
                     error.message()));
  }
  // The directory and every one above it: whoever could rename one of them
  // could swap the tree under the agent.
  for (std::filesystem::path at = path; !at.empty() && at != at.root_path();
       at = at.parent_path()) {
    if (absl::Status trusted = CheckTrusted(at); !trusted.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("memory checkpoint directory ", root,
                       " is not safe to use: ", trusted.message()));
    }
  }
  ::chmod((path / "replicas").c_str(), 0700);
  return std::unique_ptr<MemoryCheckpointStore>(
      new MemoryCheckpointStore(root, job_limit_bytes));
}

std::string MemoryCheckpointStore::JobDirectory(uint64_t job) const {
  return absl::StrCat(root_, "/job-", job);
}

std::string MemoryCheckpointStore::ReplicaDirectory(uint64_t job,
                                                    uint32_t rank) const {
  return absl::StrCat(root_, "/replicas/job-", job, "/rank-", rank);
}

absl::StatusOr<std::string> MemoryCheckpointStore::PrepareRankDirectory(
    uint64_t job, uint32_t rank, uid_t uid, gid_t gid) {
  const std::string job_dir = JobDirectory(job);
  // The job's directory is the agent's: no user can plant a name in it.
  if (::mkdir(job_dir.c_str(), 0711) != 0 && errno != EEXIST) {
    return absl::UnavailableError(ErrnoText("mkdir", job_dir));
  }
  ScopedFd job_fd(::open(job_dir.c_str(), kSnapshotDirectoryFlags));
  if (job_fd.get() < 0) {
    return absl::UnavailableError(ErrnoText("open", job_dir));
  }
  const std::string name = absl::StrCat("rank-", rank);
  if (::mkdirat(job_fd.get(), name.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::UnavailableError(ErrnoText("mkdir", job_dir + "/" + name));
  }
  struct stat info {};
  if (::fstatat(job_fd.get(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(job_dir, "/", name, " is not a directory"));
  }
  if ((info.st_uid != uid || info.st_gid != gid) &&
      ::fchownat(job_fd.get(), name.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) !=
          0) {
    return absl::UnavailableError(ErrnoText("chown", job_dir + "/" + name));
  }
  return job_dir + "/" + name;
}

std::vector<v1::HeldMemoryCheckpoint> MemoryCheckpointStore::Held(
    std::vector<std::string>* refused) const {
  std::vector<v1::HeldMemoryCheckpoint> held;
  auto add = [&](uint64_t job, uint32_t rank, const std::string& rank_dir,
                 bool replica) {
    size_t kept = 0;
    for (int64_t step : StepsIn(rank_dir)) {
      if (kept == kSnapshotsKeptPerRank) break;
      absl::StatusOr<OpenStep> open = OpenIn(rank_dir, step);
      if (!open.ok()) {
        if (refused != nullptr) {
          refused->push_back(std::string(open.status().message()));
        }
        continue;
      }
      ++kept;
      v1::HeldMemoryCheckpoint& entry = held.emplace_back();
      entry.set_job_id(job);
      entry.set_rank(rank);
      entry.set_step(step);
      entry.set_replica(replica);
      entry.set_bytes(open->listing.bytes);
    }
  };
  for (uint64_t job : NumberedEntries(root_, "job-")) {
    for (uint64_t rank : NumberedEntries(JobDirectory(job), "rank-")) {
      add(job, static_cast<uint32_t>(rank),
          absl::StrCat(JobDirectory(job), "/rank-", rank), false);
    }
  }
  const std::string replicas = root_ + "/replicas";
  for (uint64_t job : NumberedEntries(replicas, "job-")) {
    for (uint64_t rank :
         NumberedEntries(absl::StrCat(replicas, "/job-", job), "rank-")) {
      add(job, static_cast<uint32_t>(rank),
          ReplicaDirectory(job, static_cast<uint32_t>(rank)), true);
    }
  }
  return held;
}

absl::StatusOr<MemoryCheckpointStore::OpenStep> MemoryCheckpointStore::OpenIn(
    const std::string& rank_dir, int64_t step) const {
  ScopedFd rank_fd(::open(rank_dir.c_str(), kSnapshotDirectoryFlags));
  if (rank_fd.get() < 0) {
    return absl::NotFoundError(ErrnoText("open", rank_dir));
  }
  struct stat rank_info {};
  if (::fstat(rank_fd.get(), &rank_info) != 0) {
    return absl::UnavailableError(ErrnoText("stat", rank_dir));
  }
  const std::string name = absl::StrCat("step-", step);
  OpenStep open;
  open.dir =
      ScopedFd(::openat(rank_fd.get(), name.c_str(), kSnapshotDirectoryFlags));
  if (open.dir.get() < 0) {
    return absl::NotFoundError(ErrnoText("open", rank_dir + "/" + name));
  }
  // Everything in a rank's directory must be its owner's.
  open.owner = rank_info.st_uid;
  absl::StatusOr<SnapshotListing> listing =
      ListSnapshot(open.dir.get(), open.owner);
  if (!listing.ok()) {
    return absl::Status(
        listing.status().code(),
        absl::StrCat(rank_dir, "/", name, ": ", listing.status().message()));
  }
  open.listing = std::move(*listing);
  return open;
}

absl::StatusOr<MemoryCheckpointStore::OpenStep>
MemoryCheckpointStore::OpenOwnSnapshot(uint64_t job, uint32_t rank,
                                       int64_t step) const {
  return OpenIn(absl::StrCat(JobDirectory(job), "/rank-", rank), step);
}

absl::StatusOr<MemoryCheckpointStore::OpenStep>
MemoryCheckpointStore::OpenSnapshot(uint64_t job, uint32_t rank,
                                    int64_t step) const {
  absl::StatusOr<OpenStep> own = OpenOwnSnapshot(job, rank, step);
  if (!absl::IsNotFound(own.status())) return own;
  return OpenIn(ReplicaDirectory(job, rank), step);
}

bool MemoryCheckpointStore::HasOwnSnapshot(uint64_t job, uint32_t rank,
                                           int64_t step) const {
  return OpenOwnSnapshot(job, rank, step).ok();
}

absl::StatusOr<MemoryCheckpointStore::Incoming> MemoryCheckpointStore::Begin(
    const std::string& parent, const std::string& name) {
  std::error_code error;
  std::filesystem::create_directories(parent, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", parent, ": ", error.message()));
  }
  Incoming incoming;
  incoming.parent = parent;
  incoming.name = name;
  const std::string path = parent + "/" + name;
  if (::mkdir(path.c_str(), 0700) != 0) {
    return absl::UnavailableError(ErrnoText("mkdir", path));
  }
  incoming.dir = ScopedFd(::open(path.c_str(), kSnapshotDirectoryFlags));
  if (incoming.dir.get() < 0) {
    return absl::UnavailableError(ErrnoText("open", path));
  }
  return incoming;
}

absl::StatusOr<MemoryCheckpointStore::Incoming>
MemoryCheckpointStore::BeginReplica(uint64_t job, uint32_t rank, int64_t step,
                                    uint64_t bytes) {
  // What the job's replicas will take once this one is in: its newest
  // snapshot of every other rank (older ones are dropped as new ones come).
  uint64_t held_bytes = bytes;
  std::map<uint32_t, uint64_t> newest;
  for (const v1::HeldMemoryCheckpoint& entry : Held()) {
    if (entry.job_id() != job || !entry.replica() || entry.rank() == rank) {
      continue;
    }
    newest.try_emplace(entry.rank(), entry.bytes());
  }
  for (const auto& [other, other_bytes] : newest) held_bytes += other_bytes;
  if (job_limit_bytes_ > 0 && held_bytes > job_limit_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("job ", job, "'s snapshots would take ", held_bytes,
                     " bytes here, above the limit of ", job_limit_bytes_,
                     " ([agent] memory-checkpoint-limit)"));
  }
  absl::StatusOr<Incoming> incoming =
      Begin(ReplicaDirectory(job, rank),
            absl::StrCat(".incoming-", step, "-", ++incoming_counter));
  if (!incoming.ok()) return incoming;
  incoming->job = job;
  incoming->rank = rank;
  incoming->step = step;
  incoming->replica = true;
  return incoming;
}

absl::StatusOr<MemoryCheckpointStore::Incoming>
MemoryCheckpointStore::BeginRestore(uint64_t job, uint32_t rank, int64_t step) {
  // In the job's own directory (the agent's), beside the rank's.
  absl::StatusOr<Incoming> incoming = Begin(
      JobDirectory(job),
      absl::StrCat(".restore-", rank, "-", step, "-", ++incoming_counter));
  if (!incoming.ok()) return incoming;
  incoming->job = job;
  incoming->rank = rank;
  incoming->step = step;
  return incoming;
}

absl::Status MemoryCheckpointStore::Commit(Incoming incoming) {
  const std::string target_dir =
      incoming.replica
          ? incoming.parent
          : absl::StrCat(JobDirectory(incoming.job), "/rank-", incoming.rank);
  ScopedFd from(::open(incoming.parent.c_str(), kSnapshotDirectoryFlags));
  ScopedFd to(::open(target_dir.c_str(), kSnapshotDirectoryFlags));
  if (from.get() < 0 || to.get() < 0) {
    absl::Status failed = absl::UnavailableError(ErrnoText("open", target_dir));
    Abandon(std::move(incoming));
    return failed;
  }
  if (!incoming.replica) {
    struct stat owner {};
    absl::Status handed =
        ::fstat(to.get(), &owner) == 0
            ? ChownSnapshotTree(incoming.dir.get(), owner.st_uid, owner.st_gid)
            : absl::UnavailableError(ErrnoText("stat", target_dir));
    if (!handed.ok()) {
      Abandon(std::move(incoming));
      return handed;
    }
  }
  const std::string name = absl::StrCat("step-", incoming.step);
  // A step of that name already there (a half-written one the rank left,
  // or an older copy) goes first: rename does not replace a full directory.
  if (absl::Status cleared = RemoveSnapshotTree(to.get(), name);
      !cleared.ok()) {
    Abandon(std::move(incoming));
    return cleared;
  }
  if (::renameat(from.get(), incoming.name.c_str(), to.get(), name.c_str()) !=
      0) {
    absl::Status failed =
        absl::UnavailableError(ErrnoText("rename", target_dir + "/" + name));
    Abandon(std::move(incoming));
    return failed;
  }
  if (incoming.replica) {
    const std::vector<int64_t> steps = StepsIn(target_dir);
    for (size_t i = kSnapshotsKeptPerRank; i < steps.size(); ++i) {
      (void)RemoveSnapshotTree(to.get(), absl::StrCat("step-", steps[i]));
    }
  }
  return absl::OkStatus();
}

void MemoryCheckpointStore::Abandon(Incoming incoming) {
  incoming.dir = ScopedFd();
  (void)RemoveNamed(incoming.parent, incoming.name);
}

absl::Status MemoryCheckpointStore::Drop(uint64_t job) {
  // The rank directories are the user's, walked by descriptor without
  // following a link (RemoveSnapshotTree), so nothing outside is reached.
  absl::Status own = RemoveNamed(root_, absl::StrCat("job-", job));
  absl::Status replicas =
      RemoveNamed(root_ + "/replicas", absl::StrCat("job-", job));
  return own.ok() ? replicas : own;
}

std::vector<uint64_t> MemoryCheckpointStore::Jobs() const {
  std::vector<uint64_t> jobs = NumberedEntries(root_, "job-");
  for (uint64_t job : NumberedEntries(root_ + "/replicas", "job-")) {
    if (std::find(jobs.begin(), jobs.end(), job) == jobs.end()) {
      jobs.push_back(job);
    }
  }
  return jobs;
}

}  // namespace gantry::agent
