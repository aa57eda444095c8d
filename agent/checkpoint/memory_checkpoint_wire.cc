#include "agent/checkpoint/memory_checkpoint_wire.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/system/scoped_fd.h"
#include "common/text.h"

namespace gantry::agent {
namespace {

constexpr absl::string_view kMagic = "GMC1";
constexpr size_t kChunkBytes = 1 << 20;

absl::Status Invalid(absl::string_view what, const std::string& line) {
  return absl::InvalidArgumentError(
      absl::StrCat("memory checkpoint request: ", what, " in \"",
                   line.substr(0, 120), "\""));
}

template <typename T>
bool Number(absl::string_view text, T& value) {
  if (text.empty() || text.size() > 20 || text[0] == '-' || text[0] == '+') {
    return false;
  }
  return absl::SimpleAtoi(text, &value);
}

absl::Status SocketFailed(absl::string_view what) {
  const int error = errno;
  const std::string text = absl::StrCat(what, ": ", std::strerror(error));
  return error == ETIMEDOUT ? absl::DeadlineExceededError(text)
                            : absl::UnavailableError(text);
}

}  // namespace

std::string FormatMemoryCheckpointRequest(const MemoryCheckpointRequest& r) {
  if (r.kind == MemoryCheckpointRequest::Kind::kPut) {
    return absl::StrCat(kMagic, " PUT ", r.token, " ", r.job, " ", r.rank, " ",
                        r.step, " ", r.files, " ", r.bytes);
  }
  return absl::StrCat(kMagic, " GET ", r.token, " ", r.job, " ", r.rank, " ",
                      r.step);
}

absl::StatusOr<MemoryCheckpointRequest> ParseMemoryCheckpointRequest(
    const std::string& line) {
  const std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
  if (words.size() < 6 || words[0] != kMagic) return Invalid("no GMC1", line);
  MemoryCheckpointRequest request;
  if (words[1] == "PUT" && words.size() == 8) {
    request.kind = MemoryCheckpointRequest::Kind::kPut;
    if (!Number(words[6], request.files) || !Number(words[7], request.bytes) ||
        request.files > kMaxSnapshotFiles) {
      return Invalid("bad file count or size", line);
    }
  } else if (words[1] == "GET" && words.size() == 6) {
    request.kind = MemoryCheckpointRequest::Kind::kGet;
  } else {
    return Invalid("neither PUT nor GET", line);
  }
  if (words[2].size() != kMemoryCheckpointTokenLength ||
      !IsLowerHex(std::string_view(words[2].data(), words[2].size()))) {
    return Invalid("bad token", line);
  }
  request.token = std::string(words[2]);
  if (!Number(words[3], request.job) || !Number(words[4], request.rank) ||
      !Number(words[5], request.step) || request.step < 0) {
    return Invalid("bad job, rank or step", line);
  }
  return request;
}

absl::StatusOr<GoAnswer> ParseGoAnswer(const std::string& line) {
  if (line.rfind("NO ", 0) == 0) {
    return absl::FailedPreconditionError(line.substr(3, 300));
  }
  const std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
  GoAnswer answer;
  if (words.size() == 1 && words[0] == "GO") return answer;
  if (words.size() == 3 && words[0] == "GO" && Number(words[1], answer.files) &&
      Number(words[2], answer.bytes) && answer.files <= kMaxSnapshotFiles) {
    return answer;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unexpected answer \"", line.substr(0, 120), "\""));
}

absl::StatusOr<SnapshotFile> ParseSnapshotFileLine(const std::string& line) {
  const std::vector<std::string> words =
      absl::StrSplit(line, absl::MaxSplits(' ', 2));
  SnapshotFile file;
  if (words.size() != 3 || words[0] != "F" || !Number(words[1], file.bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad file line \"", line.substr(0, 120), "\""));
  }
  if (absl::Status valid = CheckSnapshotPath(words[2]); !valid.ok()) {
    return valid;
  }
  file.path = words[2];
  return file;
}

bool SendLineBy(int socket, const std::string& line,
                TransferDeadline deadline) {
  const std::string with_newline = line + "\n";
  return SendAllBy(socket, with_newline.data(), with_newline.size(), deadline);
}

absl::Status SendSnapshotFiles(int socket, int step_fd,
                               const SnapshotListing& listing, uid_t owner,
                               TransferDeadline deadline) {
  std::vector<char> buffer(kChunkBytes);
  for (const SnapshotFile& file : listing.files) {
    absl::StatusOr<int> opened = OpenSnapshotFile(step_fd, file, owner);
    if (!opened.ok()) return opened.status();
    ScopedFd in(*opened);
    if (!SendLineBy(socket, absl::StrCat("F ", file.bytes, " ", file.path),
                    deadline)) {
      return SocketFailed("send");
    }
    uint64_t left = file.bytes;
    while (left > 0) {
      const ssize_t got = ::read(in.get(), buffer.data(),
                                 std::min<uint64_t>(left, kChunkBytes));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        return absl::FailedPreconditionError(
            absl::StrCat(file.path, " shrank while the snapshot was copied"));
      }
      if (!SendAllBy(socket, buffer.data(), static_cast<size_t>(got),
                     deadline)) {
        return SocketFailed("send");
      }
      left -= static_cast<uint64_t>(got);
    }
  }
  return absl::OkStatus();
}

absl::Status ReceiveSnapshotFiles(int socket, int dir_fd, uint64_t files,
                                  uint64_t bytes, TransferDeadline deadline) {
  std::vector<char> buffer(kChunkBytes);
  uint64_t received = 0;
  for (uint64_t i = 0; i < files; ++i) {
    std::string line;
    if (!ReceiveLineBy(socket, line, kMaxMemoryCheckpointLine, deadline)) {
      return SocketFailed("receive");
    }
    absl::StatusOr<SnapshotFile> file = ParseSnapshotFileLine(line);
    if (!file.ok()) return file.status();
    if (file->bytes > bytes - received) {
      return absl::InvalidArgumentError(
          absl::StrCat("the snapshot's files pass the ", bytes,
                       " bytes announced at ", file->path));
    }
    absl::StatusOr<int> created = CreateSnapshotFile(dir_fd, file->path);
    if (!created.ok()) return created.status();
    ScopedFd out(*created);
    uint64_t left = file->bytes;
    while (left > 0) {
      const size_t piece = std::min<uint64_t>(left, kChunkBytes);
      if (!ReceiveAllBy(socket, buffer.data(), piece, deadline)) {
        return SocketFailed("receive");
      }
      size_t written = 0;
      while (written < piece) {
        const ssize_t put =
            ::write(out.get(), buffer.data() + written, piece - written);
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) {
          return absl::ResourceExhaustedError(
              absl::StrCat("writing ", file->path, ": ", std::strerror(errno)));
        }
        written += static_cast<size_t>(put);
      }
      left -= piece;
    }
    received += file->bytes;
  }
  if (received != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the snapshot's files hold ", received, " bytes, not ", bytes));
  }
  return absl::OkStatus();
}

}  // namespace gantry::agent
