#include "daemon/replication/snapshot_fetch.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/replication/snapshot_service.h"
#include "daemon/store/rocksdb_store.h"
#include "gantry/v1/replication.grpc.pb.h"

namespace gantry::replication {
namespace {

// A name the leader may give a file: a plain name inside the copy's
// directory, never a path out of it.
bool PlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos && name.size() < 256;
}

// The files being written, each open until the copy is complete.
class IncomingFiles {
 public:
  explicit IncomingFiles(std::string directory)
      : directory_(std::move(directory)) {}
  ~IncomingFiles() {
    for (auto& [name, file] : files_) ::close(file.fd);
  }

  absl::Status Write(const v1::SnapshotChunk& chunk) {
    if (!PlainFileName(chunk.file())) {
      return absl::DataLossError(
          absl::StrCat("the leader sent a file named \"", chunk.file(), "\""));
    }
    auto [it, inserted] = files_.try_emplace(chunk.file());
    File& file = it->second;
    if (inserted) {
      const std::string path = directory_ + "/" + chunk.file();
      file.fd =
          ::open(path.c_str(),
                 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (file.fd < 0) {
        return absl::UnavailableError(
            absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
      }
      file.size = chunk.file_size();
    }
    if (chunk.offset() != file.written || chunk.file_size() != file.size ||
        file.written + chunk.data().size() > file.size) {
      return absl::DataLossError(absl::StrCat(
          "the leader's copy of ", chunk.file(), " arrived out of order"));
    }
    const char* data = chunk.data().data();
    size_t left = chunk.data().size();
    while (left > 0) {
      const ssize_t n = ::write(file.fd, data, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        return absl::UnavailableError(absl::StrCat("cannot write ", directory_,
                                                   "/", chunk.file(), ": ",
                                                   std::strerror(errno)));
      }
      data += n;
      left -= static_cast<size_t>(n);
    }
    file.written += chunk.data().size();
    return absl::OkStatus();
  }

  // Every file complete and synced, and as many as the leader said.
  absl::Status Finish(uint32_t files_sent) {
    if (files_.size() != files_sent) {
      return absl::DataLossError(absl::StrCat("the leader sent ", files_sent,
                                              " files but ", files_.size(),
                                              " arrived"));
    }
    for (const auto& [name, file] : files_) {
      if (file.written != file.size) {
        return absl::DataLossError(absl::StrCat(name, " arrived with ",
                                                file.written, " of its ",
                                                file.size, " bytes"));
      }
      if (::fsync(file.fd) != 0) {
        return absl::UnavailableError(absl::StrCat(
            "cannot sync ", directory_, "/", name, ": ", std::strerror(errno)));
      }
    }
    return absl::OkStatus();
  }

 private:
  struct File {
    int fd = -1;
    uint64_t size = 0;
    uint64_t written = 0;
  };
  const std::string directory_;
  std::map<std::string, File> files_;
};

// Opens the copy as a database, checks it, and reads its log position.
absl::StatusOr<uint64_t> CheckCopy(const std::string& directory) {
  absl::StatusOr<std::unique_ptr<RocksDbStore>> copy =
      RocksDbStore::Open(directory);
  if (!copy.ok()) {
    return absl::DataLossError(
        absl::StrCat("the copy of the leader's state does not open: ",
                     copy.status().message()));
  }
  if (absl::Status verified = (*copy)->VerifyChecksums(); !verified.ok()) {
    return verified;
  }
  return (*copy)->ReplicationIndex();
}

}  // namespace

absl::StatusOr<uint64_t> FetchSnapshot(const SnapshotSource& source,
                                       const SnapshotPaths& paths,
                                       uint64_t at_least) {
  if (absl::Status prepared = PrepareIncoming(paths); !prepared.ok()) {
    return prepared;
  }
  grpc::ChannelArguments args = source.channel_args;
  // The largest piece is a chunk plus its framing.
  args.SetMaxReceiveMessageSize(static_cast<int>(2 * kSnapshotChunkBytes));
  auto channel = grpc::CreateCustomChannel(source.leader_address,
                                           source.credentials, args);
  auto stub = v1::ControllerPeerService::NewStub(channel);
  grpc::ClientContext context;
  // A stalled leader must not hold a standby forever; a healthy one sends
  // hundreds of megabytes a second on any network a cluster has.
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::minutes(30));
  v1::FetchSnapshotRequest request;
  request.set_token(source.token);
  request.set_requester(source.requester);
  std::unique_ptr<grpc::ClientReader<v1::SnapshotChunk>> reader =
      stub->FetchSnapshot(&context, request);
  std::optional<uint32_t> files_sent;
  uint64_t bytes = 0;
  {
    IncomingFiles files(paths.incoming);
    v1::SnapshotChunk chunk;
    absl::Status written = absl::OkStatus();
    while (written.ok() && reader->Read(&chunk)) {
      if (chunk.done()) {
        files_sent = chunk.files();
        continue;
      }
      bytes += chunk.data().size();
      written = files.Write(chunk);
    }
    if (!written.ok()) {
      context.TryCancel();
      reader->Finish();
      return written;
    }
    const grpc::Status finished = reader->Finish();
    if (!finished.ok()) {
      return absl::Status(
          static_cast<absl::StatusCode>(finished.error_code()),
          absl::StrCat("the leader at ", source.leader_address,
                       " did not send its state: ", finished.error_message()));
    }
    if (!files_sent) {
      return absl::DataLossError("the leader's copy ended without its end");
    }
    if (absl::Status complete = files.Finish(*files_sent); !complete.ok()) {
      return complete;
    }
  }
  absl::StatusOr<uint64_t> index = CheckCopy(paths.incoming);
  if (!index.ok()) return index.status();
  if (*index < at_least) {
    return absl::DataLossError(absl::StrCat(
        "the leader's copy holds the log up to entry ", *index,
        ", short of entry ", at_least, " where the log in etcd starts"));
  }
  if (absl::Status marked = MarkSnapshotReady(paths, *index); !marked.ok()) {
    return marked;
  }
  log::Info("fetched a copy of the leader's state",
            {{"leader", source.leader_address},
             {"bytes", bytes},
             {"files", *files_sent},
             {"applied_index", *index}});
  return *index;
}

}  // namespace gantry::replication
