#include "daemon/replication/snapshot_service.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace gantry::replication {
namespace {

// Compares without stopping at the first difference, so the time taken
// says nothing about how much of a guessed token was right.
bool SameSecret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

}  // namespace

SnapshotService::SnapshotService(RocksDbStore& store, std::string scratch_dir)
    : store_(store), scratch_dir_(std::move(scratch_dir)) {
  // A copy a crash interrupted would hold old table files (hard links) on
  // disk until the next copy: drop it now.
  std::error_code ignored;
  std::filesystem::remove_all(scratch_dir_ + "/snapshot-out", ignored);
}

void SnapshotService::SetToken(std::string token) {
  MutexLock lock(token_mutex_);
  token_ = std::move(token);
}

grpc::Status SnapshotService::FetchSnapshot(
    grpc::ServerContext* context, const v1::FetchSnapshotRequest* request,
    grpc::ServerWriter<v1::SnapshotChunk>* writer) {
  {
    MutexLock lock(token_mutex_);
    if (token_.empty() || !SameSecret(token_, request->token())) {
      log::Warn(
          "refused a request for a copy of the state: wrong token",
          {{"requester", request->requester()}, {"peer", context->peer()}});
      return {grpc::StatusCode::PERMISSION_DENIED,
              "a copy of the state needs the snapshot token that the "
              "cluster's controllers derive from their replication key"};
    }
  }
  if (copying_.exchange(true)) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            "another controller is copying the state now; try again"};
  }
  // Released on every return below, once the checkpoint is gone.
  struct Release {
    std::atomic<bool>& copying;
    ~Release() { copying.store(false); }
  } release{copying_};
  const std::string directory = scratch_dir_ + "/snapshot-out";
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);  // a crashed copy's
  if (absl::Status made = store_.CreateCheckpoint(directory); !made.ok()) {
    return {grpc::StatusCode::UNAVAILABLE, std::string(made.message())};
  }
  log::Info("sending a copy of the state",
            {{"requester", request->requester()}, {"peer", context->peer()}});
  grpc::Status sent = StreamCheckpoint(context, directory, writer);
  std::filesystem::remove_all(directory, ignored);
  log::Info("copy of the state sent", {{"requester", request->requester()},
                                       {"result", sent.error_message()}});
  return sent;
}

grpc::Status SnapshotService::StreamCheckpoint(
    grpc::ServerContext* context, const std::string& directory,
    grpc::ServerWriter<v1::SnapshotChunk>* writer) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(directory, error)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  if (error) {
    return {grpc::StatusCode::UNAVAILABLE,
            absl::StrCat("cannot list ", directory, ": ", error.message())};
  }
  std::string buffer(kSnapshotChunkBytes, '\0');
  for (const std::filesystem::path& path : files) {
    std::ifstream in(path, std::ios::binary);
    const uint64_t size = std::filesystem::file_size(path, error);
    if (!in || error) {
      return {grpc::StatusCode::UNAVAILABLE,
              absl::StrCat("cannot read ", path.string())};
    }
    uint64_t offset = 0;
    do {
      in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      const size_t got = static_cast<size_t>(in.gcount());
      v1::SnapshotChunk chunk;
      chunk.set_file(path.filename().string());
      chunk.set_offset(offset);
      chunk.set_file_size(size);
      chunk.set_data(buffer.data(), got);
      if (context->IsCancelled() || !writer->Write(chunk)) {
        return {grpc::StatusCode::CANCELLED, "the standby went away"};
      }
      offset += got;
    } while (offset < size && in);
    if (offset != size) {
      return {grpc::StatusCode::UNAVAILABLE,
              absl::StrCat(path.string(), " changed while being sent")};
    }
  }
  v1::SnapshotChunk done;
  done.set_done(true);
  done.set_files(static_cast<uint32_t>(files.size()));
  writer->Write(done);
  return grpc::Status::OK;
}

}  // namespace gantry::replication
