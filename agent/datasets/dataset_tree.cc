#include "agent/datasets/dataset_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "agent/datasets/file_digest.h"
#include "agent/datasets/sha256_digest.h"
#include "agent/system/scoped_fd.h"
#include "common/crash_point.h"
#include "common/mutex.h"

namespace gantry::agent {
namespace {

constexpr char kJournal[] = "journal";
constexpr char kManifest[] = "manifest";
// Per read: 256 KiB measured best here (1 MiB and 4 MiB buffers, four
// threads at once, fall out of the CPU caches before they are hashed).
constexpr size_t kChunk = 256 << 10;

absl::Status ErrnoStatus(int error, const std::string& what,
                         const std::string& path) {
  const std::string message =
      absl::StrCat(what, " ", path, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case ENOTDIR:
    case ELOOP:
      return absl::InvalidArgumentError(message);
    default:
      return absl::UnavailableError(message);
  }
}

// A failure on the cache's side (the node's disk): INTERNAL, which the
// cache reports as the node's fault rather than the job's.
absl::Status LocalError(int error, const std::string& what,
                        const std::string& path) {
  return absl::InternalError(absl::StrCat("local cache: ", what, " ", path,
                                          ": ", std::strerror(error)));
}

struct DirCloser {
  void operator()(DIR* dir) const { closedir(dir); }
};

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
         st.st_mtim.tv_nsec;
}

struct ScanState {
  const std::string& top;
  DatasetManifest manifest;
};

absl::Status ScanDirectory(ScanState& state, int dir_fd,
                           const std::string& relative, int depth) {
  const std::string shown =
      relative.empty() ? state.top : state.top + "/" + relative;
  if (depth > kMaxDatasetDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        shown, " is more than ", kMaxDatasetDepth, " directories deep"));
  }
  const int listing_fd = dup(dir_fd);
  if (listing_fd < 0) return ErrnoStatus(errno, "cannot read", shown);
  std::unique_ptr<DIR, DirCloser> dir(fdopendir(listing_fd));
  if (dir == nullptr) {
    close(listing_fd);
    return ErrnoStatus(errno, "cannot read", shown);
  }
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* item = readdir(dir.get())) {
    const std::string name = item->d_name;
    if (name == "." || name == "..") continue;
    names.push_back(name);
    errno = 0;
  }
  if (errno != 0) return ErrnoStatus(errno, "cannot read", shown);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = relative.empty() ? name : relative + "/" + name;
    const std::string full = state.top + "/" + path;
    struct stat st {};
    if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return ErrnoStatus(errno, "cannot read", full);
    }
    if (state.manifest.entries.size() >= kMaxDatasetEntries) {
      return absl::InvalidArgumentError(absl::StrCat(
          state.top, " holds more than ", kMaxDatasetEntries, " entries"));
    }
    DatasetEntry entry;
    entry.path = path;
    entry.mode = st.st_mode & 07777;
    entry.mtime_ns = MtimeNs(st);
    if (S_ISREG(st.st_mode)) {
      entry.kind = DatasetEntry::Kind::kFile;
      entry.size = static_cast<uint64_t>(st.st_size);
      state.manifest.total_bytes += entry.size;
      ++state.manifest.file_count;
      state.manifest.entries.push_back(std::move(entry));
    } else if (S_ISLNK(st.st_mode)) {
      entry.kind = DatasetEntry::Kind::kSymlink;
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      const ssize_t length =
          readlinkat(dir_fd, name.c_str(), target.data(), target.size());
      if (length < 0) return ErrnoStatus(errno, "cannot read link", full);
      target.resize(static_cast<size_t>(length));
      entry.link_target = std::move(target);
      state.manifest.entries.push_back(std::move(entry));
    } else if (S_ISDIR(st.st_mode)) {
      entry.kind = DatasetEntry::Kind::kDirectory;
      state.manifest.entries.push_back(std::move(entry));
      ScopedFd child(openat(dir_fd, name.c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (child.get() < 0) return ErrnoStatus(errno, "cannot read", full);
      if (absl::Status status =
              ScanDirectory(state, child.get(), path, depth + 1);
          !status.ok()) {
        return status;
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          full, " is not a regular file, directory or symbolic link"));
    }
  }
  return absl::OkStatus();
}

// One entry's line in a version digest: its kind, size, `detail` (the
// modification time, or the file's SHA-256), path and link target, each
// length-prefixed where it is free text.
std::string VersionLine(const DatasetEntry& e, absl::string_view detail) {
  return absl::StrCat(static_cast<int>(e.kind), " ", e.size, " ", detail, " ",
                      e.path.size(), ":", e.path, " ", e.link_target.size(),
                      ":", e.link_target, "\n");
}

// The content version of kContent: a digest of every entry's path, kind,
// size and link target and of every file's SHA-256 (`file_digests`, by
// path). NOT_FOUND if a file's digest is missing.
absl::StatusOr<std::string> ContentDigestVersion(
    const DatasetManifest& manifest,
    const std::map<std::string, std::string>& file_digests) {
  Sha256Digest digest;
  digest.Add("content\n", 8);
  for (const DatasetEntry& e : manifest.entries) {
    std::string sha;
    if (e.kind == DatasetEntry::Kind::kFile) {
      auto it = file_digests.find(e.path);
      if (it == file_digests.end()) {
        return absl::NotFoundError(absl::StrCat("no digest of ", e.path));
      }
      sha = it->second;
    }
    const std::string line = VersionLine(e, sha);
    digest.Add(line.data(), line.size());
  }
  return digest.Hex().substr(0, 32);
}

// The content version: the user's manifest file's digest when there is
// one, else a digest of every entry's identity.
absl::StatusOr<std::string> ContentVersion(const std::string& source,
                                           int top_fd,
                                           const DatasetManifest& manifest) {
  Sha256Digest digest;
  const bool user_manifest =
      std::any_of(manifest.entries.begin(), manifest.entries.end(),
                  [](const DatasetEntry& e) {
                    return e.kind == DatasetEntry::Kind::kFile &&
                           e.path == kDatasetManifestFile;
                  });
  if (user_manifest) {
    ScopedFd fd(openat(top_fd, kDatasetManifestFile,
                       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    const std::string path = source + "/" + kDatasetManifestFile;
    if (fd.get() < 0) return ErrnoStatus(errno, "cannot read", path);
    digest.Add("user-manifest\n", 14);
    char buffer[65536];
    while (true) {
      const ssize_t n = read(fd.get(), buffer, sizeof(buffer));
      if (n < 0) return ErrnoStatus(errno, "cannot read", path);
      if (n == 0) break;
      digest.Add(buffer, static_cast<size_t>(n));
    }
  } else {
    for (const DatasetEntry& e : manifest.entries) {
      const std::string line = VersionLine(e, absl::StrCat(e.mtime_ns));
      digest.Add(line.data(), line.size());
    }
  }
  return digest.Hex().substr(0, 32);
}

// Journal lines: "<digest> <size> <path as hex>", one per file copied
// (FileDigest::Text: SHA-256 or CRC-32C). A torn last line (a crash
// mid-write) is ignored, and so is any line that is not one of these.
std::map<std::string, std::pair<uint64_t, std::string>> ReadJournal(
    const std::string& path) {
  std::map<std::string, std::pair<uint64_t, std::string>> done;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string digest, hex_path;
    uint64_t size = 0;
    if (!(fields >> digest >> size >> hex_path) ||
        !FileDigest::KindOf(digest).has_value()) {
      continue;
    }
    done[absl::HexStringToBytes(hex_path)] = {size, digest};
  }
  return done;
}

// Digests the whole regular file at `fd` from its start.
absl::StatusOr<std::pair<uint64_t, std::string>> HashFile(
    int fd, const std::string& shown,
    FileDigestKind kind = FileDigestKind::kSha256) {
  if (lseek(fd, 0, SEEK_SET) != 0) return ErrnoStatus(errno, "seek", shown);
  FileDigest digest(kind);
  std::vector<char> buffer(kChunk);
  uint64_t total = 0;
  while (true) {
    const ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0) return ErrnoStatus(errno, "cannot read", shown);
    if (n == 0) break;
    digest.Add(buffer.data(), static_cast<size_t>(n));
    total += static_cast<uint64_t>(n);
  }
  return std::make_pair(total, digest.Text());
}

// The kContent version of the tree `manifest` lists: every file read and
// hashed (the whole tree), then ContentDigestVersion.
absl::StatusOr<std::string> FileContentVersion(
    const std::string& source, int top_fd, const DatasetManifest& manifest) {
  std::map<std::string, std::string> digests;
  for (const DatasetEntry& e : manifest.entries) {
    if (e.kind != DatasetEntry::Kind::kFile) continue;
    const std::string path = source + "/" + e.path;
    ScopedFd fd(openat(top_fd, e.path.c_str(),
                       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0) return ErrnoStatus(errno, "cannot read", path);
    absl::StatusOr<std::pair<uint64_t, std::string>> hashed =
        HashFile(fd.get(), path);
    if (!hashed.ok()) return hashed.status();
    if (hashed->first != e.size) {
      return absl::AbortedError(
          absl::StrCat(path, " changed while the dataset was being read"));
    }
    digests[e.path] = hashed->second;
  }
  return ContentDigestVersion(manifest, digests);
}

absl::Status WriteAll(int fd, const char* data, size_t size,
                      const std::string& shown) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return LocalError(errno, "cannot write", shown);
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// What the copy's threads share: the files to copy, the first error, the
// bytes done for progress, and the journal.
struct CopyContext {
  const std::string& source;
  const DatasetManifest& manifest;
  std::string data;          // the partial copy's data directory
  std::string earlier_data;  // the earlier entry's data directory, or ""
  const StageProgress& progress;
  // SHA-256 when the copy must prove a content version, else CRC-32C.
  FileDigestKind digest_kind = FileDigestKind::kSha256;
  const std::map<std::string, std::pair<uint64_t, std::string>>& journaled;
  int journal_fd = -1;
  std::string journal_path;
  std::vector<const DatasetEntry*> files{};
  std::atomic<size_t> next{0};
  Mutex mutex{};  // also keeps the journal's lines whole
  absl::Status first_error ABSL_GUARDED_BY(mutex){};
  uint64_t done ABSL_GUARDED_BY(mutex) = 0;
  CopyResult result ABSL_GUARDED_BY(mutex){};
  // Each file's digest (FileDigest::Text), by path: a content version is
  // computed from them.
  std::map<std::string, std::string> digests ABSL_GUARDED_BY(mutex){};
};

void AddDone(CopyContext& context, uint64_t bytes) {
  MutexLock lock(context.mutex);
  context.done += bytes;
  // A file copied again after a failed read of the earlier version counts
  // twice: never report more than the whole.
  if (context.progress) {
    context.progress(std::min(context.done, context.manifest.total_bytes),
                     context.manifest.total_bytes);
  }
}

// Copies the regular file `from` (the source's, or the earlier entry's
// copy of it) to `to`; returns the digest of the bytes copied. `from` must
// still have the size and modification time the scan found, and yield that
// many bytes (ABORTED otherwise).
absl::StatusOr<std::string> CopyFile(CopyContext& context,
                                     const DatasetEntry& entry,
                                     const std::string& from,
                                     const std::string& to) {
  ScopedFd in(
      open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (in.get() < 0) return ErrnoStatus(errno, "cannot read", from);
  struct stat st {};
  if (fstat(in.get(), &st) != 0) return ErrnoStatus(errno, "cannot read", from);
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != entry.size ||
      MtimeNs(st) != entry.mtime_ns) {
    return absl::AbortedError(
        absl::StrCat(from, " changed while the dataset was being staged"));
  }
  posix_fadvise(in.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  ScopedFd out(open(
      to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (out.get() < 0) return LocalError(errno, "cannot write", to);
  FileDigest digest(context.digest_kind);
  std::vector<char> buffer(kChunk);
  uint64_t copied = 0;
  while (true) {
    const ssize_t n = read(in.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "cannot read", from);
    if (n == 0) break;
    digest.Add(buffer.data(), static_cast<size_t>(n));
    if (absl::Status status =
            WriteAll(out.get(), buffer.data(), static_cast<size_t>(n), to);
        !status.ok()) {
      return status;
    }
    copied += static_cast<uint64_t>(n);
    AddDone(context, static_cast<uint64_t>(n));
  }
  if (copied != entry.size) {
    return absl::AbortedError(
        absl::StrCat(from, " changed while the dataset was being staged"));
  }
  // No read-back here: it would read the page cache just written, not the
  // disk, and cost a second pass over every byte. What reaches the disk is
  // checked where it matters: a resumed copy trusts a journaled file only
  // if it reads back as journaled.
  const std::string written = digest.Text();
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  futimens(out.get(), times);
  fchmod(out.get(), (entry.mode & 0777) | 0400);
  return written;
}

// Whether the file already in the partial copy is the one the journal
// recorded (a copy interrupted after its journal line is trusted only if
// it still reads back the same).
// Checked with the digest the line holds (a journal written before
// CRC-32C holds SHA-256), except that a copy that needs SHA-256 (a content
// version) trusts nothing else.
bool AlreadyCopied(const std::string& to, uint64_t size,
                   const std::string& digest, FileDigestKind needed) {
  const std::optional<FileDigestKind> kind = FileDigest::KindOf(digest);
  if (!kind.has_value() ||
      (needed == FileDigestKind::kSha256 && *kind != needed)) {
    return false;
  }
  ScopedFd fd(open(to.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return false;
  absl::StatusOr<std::pair<uint64_t, std::string>> check =
      HashFile(fd.get(), to, *kind);
  return check.ok() && check->first == size && check->second == digest;
}

absl::Status SyncPath(const std::string& path) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0 || fsync(fd.get()) != 0) {
    return LocalError(errno, "cannot sync", path);
  }
  return absl::OkStatus();
}

// One file: kept if the partial copy already holds it as journaled, else
// copied from the earlier entry or from the source, then journaled.
absl::Status StageFile(CopyContext& context, const DatasetEntry& e) {
  const std::string to = context.data + "/" + e.path;
  auto it = context.journaled.find(e.path);
  if (it != context.journaled.end() && it->second.first == e.size &&
      AlreadyCopied(to, e.size, it->second.second, context.digest_kind)) {
    AddDone(context, e.size);
    MutexLock lock(context.mutex);
    context.result.bytes_resumed += e.size;
    context.digests[e.path] = it->second.second;
    return absl::OkStatus();
  }
  // From the earlier version's copy when it holds the file as the scan
  // found it (CopyFile checks the type, size and mtime before it reads a
  // byte, and a copy keeps the source's mtime); otherwise, or if that read
  // fails, from the source.
  bool reuse = !context.earlier_data.empty();
  absl::StatusOr<std::string> digest =
      reuse ? CopyFile(context, e, context.earlier_data + "/" + e.path, to)
            : absl::UnknownError("no earlier version");
  if (!digest.ok()) {
    reuse = false;
    digest = CopyFile(context, e, context.source + "/" + e.path, to);
  }
  if (!digest.ok()) return digest.status();
  const std::string line = absl::StrCat(*digest, " ", e.size, " ",
                                        absl::BytesToHexString(e.path), "\n");
  MutexLock lock(context.mutex);
  (reuse ? context.result.bytes_reused : context.result.bytes_copied) += e.size;
  context.digests[e.path] = *digest;
  if (absl::Status status = WriteAll(context.journal_fd, line.data(),
                                     line.size(), context.journal_path);
      !status.ok()) {
    return status;
  }
  CrashPoint("agent.dataset.after_file_copied");
  return absl::OkStatus();
}

// A copy thread: takes the next file until none is left or one failed.
void CopyFiles(CopyContext& context) {
  while (true) {
    {
      MutexLock lock(context.mutex);
      if (!context.first_error.ok()) return;
    }
    const size_t index = context.next.fetch_add(1);
    if (index >= context.files.size()) return;
    absl::Status status = StageFile(context, *context.files[index]);
    if (!status.ok()) {
      MutexLock lock(context.mutex);
      if (context.first_error.ok()) context.first_error = std::move(status);
      return;
    }
  }
}

// Flushes everything written to the filesystem holding `path` at once.
absl::Status SyncFilesystem(const std::string& path) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0 || syncfs(fd.get()) != 0) {
    return LocalError(errno, "cannot sync", path);
  }
  return absl::OkStatus();
}

}  // namespace

std::string DatasetDataPath(const std::string& entry) {
  return entry + "/data";
}

std::string DatasetPartialPath(const std::string& entry) {
  return entry + ".partial";
}

std::string DatasetCompletionPath(const std::string& entry) {
  return entry + "/" + kManifest;
}

absl::StatusOr<DatasetManifest> ScanDatasetTree(const std::string& source,
                                                DatasetVersionBy version_by) {
  ScopedFd top(
      open(source.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (top.get() < 0) {
    if (errno == ENOTDIR || errno == ELOOP) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, " is not a directory"));
    }
    return ErrnoStatus(errno, "cannot read", source);
  }
  ScanState state{source, {}};
  if (absl::Status status = ScanDirectory(state, top.get(), "", 0);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<std::string> version =
      version_by == DatasetVersionBy::kContent
          ? FileContentVersion(source, top.get(), state.manifest)
          : ContentVersion(source, top.get(), state.manifest);
  if (!version.ok()) return version.status();
  state.manifest.version = *version;
  return std::move(state.manifest);
}

absl::StatusOr<CopyResult> CopyDatasetTree(const std::string& source,
                                           const DatasetManifest& manifest,
                                           const std::string& entry,
                                           const StageProgress& progress,
                                           const CopyOptions& options) {
  if (access((entry + "/" + kManifest).c_str(), F_OK) == 0) {
    return absl::AlreadyExistsError(absl::StrCat(entry, " is complete"));
  }
  const std::string partial = DatasetPartialPath(entry);
  const std::string data = DatasetDataPath(partial);
  for (const std::string& dir : {partial, data}) {
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return LocalError(errno, "cannot create", dir);
    }
  }
  const std::string journal_path = partial + "/" + kJournal;
  const auto journaled = ReadJournal(journal_path);
  ScopedFd journal(open(journal_path.c_str(),
                        O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                        0600));
  if (journal.get() < 0) return LocalError(errno, "cannot write", journal_path);
  CopyContext context{
      .source = source,
      .manifest = manifest,
      .data = data,
      .earlier_data = options.earlier_entry.empty()
                          ? std::string()
                          : DatasetDataPath(options.earlier_entry),
      .progress = progress,
      .digest_kind = options.content_version.empty() ? FileDigestKind::kCrc32c
                                                     : FileDigestKind::kSha256,
      .journaled = journaled,
      .journal_fd = journal.get(),
      .journal_path = journal_path};
  for (const DatasetEntry& e : manifest.entries) {
    const std::string to = data + "/" + e.path;
    if (e.kind == DatasetEntry::Kind::kDirectory) {
      if (mkdir(to.c_str(), 0700) != 0 && errno != EEXIST) {
        return LocalError(errno, "cannot create", to);
      }
    } else if (e.kind == DatasetEntry::Kind::kSymlink) {
      unlink(to.c_str());
      if (symlink(e.link_target.c_str(), to.c_str()) != 0) {
        return LocalError(errno, "cannot create", to);
      }
    } else {
      context.files.push_back(&e);
    }
  }
  const size_t threads = std::min<size_t>(
      context.files.size(),
      static_cast<size_t>(std::max(1, options.parallel_files)));
  std::vector<std::thread> copiers;
  for (size_t i = 1; i < threads; ++i) {
    copiers.emplace_back([&context] { CopyFiles(context); });
  }
  CopyFiles(context);
  for (std::thread& copier : copiers) copier.join();
  // What the copiers left, taken under their lock (they are done with it).
  absl::Status first_error;
  std::map<std::string, std::string> digests;
  CopyResult result;
  {
    MutexLock lock(context.mutex);
    first_error = std::move(context.first_error);
    digests = std::move(context.digests);
    result = context.result;
  }
  if (!first_error.ok()) return first_error;
  if (!options.content_version.empty()) {
    absl::StatusOr<std::string> copied_version =
        ContentDigestVersion(manifest, digests);
    if (!copied_version.ok()) return copied_version.status();
    if (*copied_version != options.content_version) {
      return absl::AbortedError(
          absl::StrCat(source, " changed while the dataset was being staged"));
    }
  }
  // Once for the whole copy, before the manifest says it is complete.
  if (absl::Status status = SyncFilesystem(data); !status.ok()) return status;
  // Directory modes last: a read-only directory would refuse its files.
  for (auto e = manifest.entries.rbegin(); e != manifest.entries.rend(); ++e) {
    if (e->kind == DatasetEntry::Kind::kDirectory) {
      chmod((data + "/" + e->path).c_str(), (e->mode & 0777) | 0700);
    }
  }
  const std::string manifest_text =
      absl::StrCat("version ", manifest.version, "\nbytes ",
                   manifest.total_bytes, "\nfiles ", manifest.file_count, "\n");
  const std::string manifest_path = partial + "/" + kManifest;
  {
    ScopedFd out(open(manifest_path.c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                      0600));
    if (out.get() < 0) return LocalError(errno, "cannot write", manifest_path);
    if (absl::Status status = WriteAll(out.get(), manifest_text.data(),
                                       manifest_text.size(), manifest_path);
        !status.ok()) {
      return status;
    }
    if (fsync(out.get()) != 0) {
      return LocalError(errno, "cannot sync", manifest_path);
    }
  }
  if (absl::Status status = SyncPath(partial); !status.ok()) return status;
  unlink(journal_path.c_str());
  if (rename(partial.c_str(), entry.c_str()) != 0) {
    return LocalError(errno, "cannot complete", entry);
  }
  const size_t slash = entry.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    (void)SyncPath(entry.substr(0, slash));
  }
  return result;
}

absl::StatusOr<uint64_t> CompleteDatasetBytes(const std::string& entry) {
  // The entry lives in a directory its user controls: never follow a link
  // or block on a FIFO planted in the manifest's place.
  const std::string path = entry + "/" + kManifest;
  ScopedFd fd(
      open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    return absl::NotFoundError(absl::StrCat(entry, " is not complete"));
  }
  struct stat st {};
  char text[4096];
  ssize_t length = -1;
  if (fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode)) {
    length = read(fd.get(), text, sizeof(text) - 1);
  }
  if (length < 0) {
    return absl::DataLossError(absl::StrCat(path, " is unreadable"));
  }
  std::istringstream in(std::string(text, static_cast<size_t>(length)));
  std::string key;
  uint64_t value = 0;
  while (in >> key) {
    if (key == "bytes" && in >> value) return value;
    std::string skip;
    in >> skip;
  }
  return absl::DataLossError(absl::StrCat(path, " has no size"));
}

}  // namespace gantry::agent
