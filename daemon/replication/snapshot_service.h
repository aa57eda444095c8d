// The leader's side of a standby's catching up from scratch: a consistent
// copy of its RocksDB (a checkpoint, hard links taken while commits go on)
// streamed file by file to a standby that is behind the log's truncation.
//
// Only a controller of the same cluster may have it: the request carries
// the token every controller derives from the cluster's replication key
// (record_seal.h), which is kept outside etcd, so reading etcd does not
// give it. One copy at a time; the checkpoint is removed when the stream
// ends.
//
// Threading: gRPC's sync server threads; SetToken from any thread.
#pragma once

#include <atomic>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "daemon/store/rocksdb_store.h"
#include "gantry/v1/replication.grpc.pb.h"

namespace gantry::replication {

// Files are sent in pieces of this size.
inline constexpr size_t kSnapshotChunkBytes = 1 << 20;

class SnapshotService final : public v1::ControllerPeerService::Service {
 public:
  // Checkpoints go to `scratch_dir` (on the database's file system).
  SnapshotService(RocksDbStore& store, std::string scratch_dir);

  // The token requests must carry (empty: every request is refused).
  void SetToken(std::string token);

  grpc::Status FetchSnapshot(
      grpc::ServerContext* context, const v1::FetchSnapshotRequest* request,
      grpc::ServerWriter<v1::SnapshotChunk>* writer) override;

 private:
  grpc::Status StreamCheckpoint(grpc::ServerContext* context,
                                const std::string& directory,
                                grpc::ServerWriter<v1::SnapshotChunk>* writer);

  RocksDbStore& store_;
  const std::string scratch_dir_;
  Mutex token_mutex_;
  std::string token_ ABSL_GUARDED_BY(token_mutex_);
  // True while a checkpoint exists: claimed with exchange, so a second
  // request is refused rather than queued behind a copy.
  std::atomic<bool> copying_{false};
};

}  // namespace gantry::replication
