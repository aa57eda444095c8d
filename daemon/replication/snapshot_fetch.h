// A standby's copy of the leader's state (snapshot_service.h), fetched into
// STATE/db.incoming and checked before it is marked ready to install
// (snapshot_install.h): every file complete and named plainly, as many
// files as the leader sent, the copy opens as a database whose table files
// pass their checksums, and it holds the log up to at least `at_least`.
//
// Threading: blocks the calling thread; no shared state.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "daemon/replication/snapshot_install.h"

namespace gantry::replication {

struct SnapshotSource {
  std::string leader_address;  // HOST:PORT
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  grpc::ChannelArguments channel_args;  // the TLS server name, if any
  std::string token;                    // PREFIX/snapshot-token
  std::string requester;                // this controller's name
};

// Returns the copy's replication index, once it is marked ready. Errors:
// the leader's (PERMISSION_DENIED, RESOURCE_EXHAUSTED, UNAVAILABLE),
// DATA_LOSS for a copy that fails a check (nothing is marked ready),
// UNAVAILABLE for local file errors.
absl::StatusOr<uint64_t> FetchSnapshot(const SnapshotSource& source,
                                       const SnapshotPaths& paths,
                                       uint64_t at_least);

}  // namespace gantry::replication
