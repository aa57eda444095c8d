#include "agent/datasets/dataset_record.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/datasets/sha256_digest.h"
#include "agent/system/scoped_fd.h"
#include "common/crash_point.h"
#include "common/text.h"

namespace gantry::agent {
namespace {

constexpr char kHeader[] = "gantry-dataset-record 1";
constexpr char kTemporary[] = ".tmp";
constexpr size_t kMaxRecordBytes = 64 * 1024;

absl::Status RecordError(const std::string& what, const std::string& path,
                         int error) {
  return absl::InternalError(absl::StrCat("local cache: ", what, " ", path,
                                          ": ", std::strerror(error)));
}

std::string FileName(uid_t uid, const std::string& name,
                     const std::string& version) {
  return absl::StrCat(uid, ".", name, ".", version);
}

std::string Seal(const std::string& body) {
  Sha256Digest digest;
  digest.Add(body);
  return absl::StrCat(body, "sum ", digest.Hex(), "\n");
}

std::string Text(const DatasetRecord& record) {
  return Seal(absl::StrCat(
      kHeader, "\nuid ", record.uid, "\nname ", record.name, "\nversion ",
      record.version, "\nstate ", record.complete ? "complete" : "partial",
      "\nsource ", absl::BytesToHexString(record.source), "\nbytes ",
      record.bytes, "\nfiles ", record.files, "\nlast_use_ms ",
      record.last_use_ms, "\nfingerprint ",
      record.fingerprint.empty() ? "-" : record.fingerprint, "\n"));
}

// The record in `text`, or nullopt when it is not one, exactly as written.
std::optional<DatasetRecord> Parse(const std::string& text) {
  const size_t sum_at = text.rfind("sum ");
  if (sum_at == std::string::npos || Seal(text.substr(0, sum_at)) != text) {
    return std::nullopt;
  }
  std::map<std::string, std::string> fields;
  std::vector<std::string> lines =
      absl::StrSplit(text.substr(0, sum_at), '\n', absl::SkipEmpty());
  if (lines.empty() || lines[0] != kHeader) return std::nullopt;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> parts =
        absl::StrSplit(lines[i], absl::MaxSplits(' ', 1));
    if (parts.size() != 2 || !fields.emplace(parts[0], parts[1]).second) {
      return std::nullopt;
    }
  }
  DatasetRecord record;
  uint32_t uid = 0;
  if (fields.size() != 9 || !absl::SimpleAtoi(fields["uid"], &uid) ||
      !absl::SimpleAtoi(fields["bytes"], &record.bytes) ||
      !absl::SimpleAtoi(fields["files"], &record.files) ||
      !absl::SimpleAtoi(fields["last_use_ms"], &record.last_use_ms) ||
      !IsLowerHex(fields["source"]) || fields["source"].size() % 2 != 0) {
    return std::nullopt;
  }
  record.uid = uid;
  record.name = fields["name"];
  record.version = fields["version"];
  record.source = absl::HexStringToBytes(fields["source"]);
  const std::string& state = fields["state"];
  if (state != "complete" && state != "partial") return std::nullopt;
  record.complete = state == "complete";
  if (fields["fingerprint"] != "-") record.fingerprint = fields["fingerprint"];
  if (record.complete && record.fingerprint.empty()) return std::nullopt;
  return record;
}

// The text of `name` in `dir`, read without following a link.
std::optional<std::string> ReadSmallFile(int dir_fd, const std::string& name) {
  ScopedFd fd(openat(dir_fd, name.c_str(),
                     O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) > kMaxRecordBytes) {
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = read(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    done += static_cast<size_t>(n);
  }
  return text;
}

absl::Status SyncDirectory(const std::string& dir) {
  ScopedFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0 || fsync(fd.get()) != 0) {
    return RecordError("cannot sync", dir, errno);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> OpenDatasetRecords(const std::string& root) {
  const std::string dir = root + "/.records";
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return RecordError("cannot create", dir, errno);
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0)
    return RecordError("cannot use", dir, errno);
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 077) != 0) {
    return absl::InternalError(
        absl::StrCat("local cache: ", dir,
                     " must be a directory only the agent's user can use"));
  }
  return dir;
}

LoadedDatasetRecords LoadDatasetRecords(const std::string& dir) {
  LoadedDatasetRecords loaded;
  ScopedFd fd(
      open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return loaded;
  std::vector<std::string> names;
  if (DIR* listing = fdopendir(dup(fd.get()))) {
    while (struct dirent* item = readdir(listing)) {
      const std::string name = item->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(listing);
  }
  for (const std::string& name : names) {
    std::optional<DatasetRecord> record;
    if (std::optional<std::string> text = ReadSmallFile(fd.get(), name)) {
      record = Parse(*text);
    }
    if (record.has_value() &&
        FileName(record->uid, record->name, record->version) == name) {
      loaded.records.push_back(std::move(*record));
      continue;
    }
    unlinkat(fd.get(), name.c_str(), 0);
    loaded.dropped.push_back(name);
  }
  return loaded;
}

absl::Status WriteDatasetRecord(const std::string& dir,
                                const DatasetRecord& record) {
  const std::string path =
      absl::StrCat(dir, "/", FileName(record.uid, record.name, record.version));
  const std::string temporary = path + kTemporary;
  const std::string text = Text(record);
  {
    ScopedFd out(open(temporary.c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                      0600));
    if (out.get() < 0) return RecordError("cannot write", temporary, errno);
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n =
          write(out.get(), text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return RecordError("cannot write", temporary, errno);
      done += static_cast<size_t>(n);
    }
    if (fsync(out.get()) != 0) {
      return RecordError("cannot sync", temporary, errno);
    }
  }
  CrashPoint("agent.dataset.record_before_rename");
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    return RecordError("cannot write", path, errno);
  }
  return SyncDirectory(dir);
}

absl::Status RemoveDatasetRecord(const std::string& dir, uid_t uid,
                                 const std::string& name,
                                 const std::string& version) {
  const std::string path = absl::StrCat(dir, "/", FileName(uid, name, version));
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return RecordError("cannot remove", path, errno);
  }
  return SyncDirectory(dir);
}

}  // namespace gantry::agent
