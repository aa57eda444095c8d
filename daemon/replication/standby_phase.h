// gantryd's life as a standby, from start until it is elected: its ports
// answer with where the leader is (StandbyService) while the
// ReplicatedController follows the log and campaigns. Returns once this
// gantryd leads, with its ports closed again, for the controller's own
// server to take them (the same port when --listen asked for any).
//
// Threading: main's thread; blocks.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "daemon/replication/replicated_controller.h"

namespace gantry::replication {

struct StandbyPorts {
  std::string listen;  // HOST:PORT, port 0: any free; empty: none
  std::string socket;  // unix socket path; empty: none
  std::shared_ptr<grpc::ServerCredentials> tcp_credentials;
};

struct Elected {
  std::unique_ptr<ReplicatedController> controller;
  // --listen with the port the standby was given (when it asked for 0).
  std::string listen;
};

// `options.address` empty: derived from the bound port (the host name for
// a wildcard host). Errors: the ports cannot be bound (UNAVAILABLE), bad
// etcd endpoints, or WaitUntilLeader's.
absl::StatusOr<Elected> StandUntilElected(
    ReplicationOptions options, RocksDbStore& local,
    ReplicatedController::StepDown step_down, const StandbyPorts& ports);

}  // namespace gantry::replication
