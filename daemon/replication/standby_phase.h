// gantryd's life as a standby, from start until it is elected: its ports
// answer with where the leader is (StandbyService) while the
// ReplicatedController follows the log and campaigns. Returns once this
// gantryd leads, with the standby still answering on its ports until the
// controller's own server has bound them beside it (gRPC sets
// SO_REUSEPORT); then Elected::CloseStandbyPorts.
//
// Threading: main's thread; blocks.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "daemon/replication/replicated_controller.h"
#include "daemon/replication/standby_service.h"

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
  // The standby's server still answers (pointing callers at this
  // controller) until the controller's own server listens on the same
  // ports: call CloseStandbyPorts then, so there is no moment when a
  // client or agent finds the port closed and backs off.
  std::unique_ptr<StandbyService> standby_service;
  std::unique_ptr<grpc::Server> standby_server;
  void CloseStandbyPorts();
};

// `options.address` empty: derived from the bound port (the host name for
// a wildcard host). Errors: the ports cannot be bound (UNAVAILABLE), bad
// etcd endpoints, or WaitUntilLeader's.
absl::StatusOr<Elected> StandUntilElected(
    ReplicationOptions options, RocksDbStore& local,
    ReplicatedController::StepDown step_down, const StandbyPorts& ports);

}  // namespace gantry::replication
