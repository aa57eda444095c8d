// gantryd's life as a standby, from start until it is elected: its ports
// answer with where the leader is (StandbyService) while the
// ReplicatedController follows the log and campaigns. Returns once this
// gantryd leads, with the standby still answering on its ports until the
// controller's own server has bound them beside it (gRPC sets
// SO_REUSEPORT); then Elected::CloseStandbyPorts.
//
// The replication metrics (replication_metrics.h) start with the standby,
// so a standby exports its lag on the metrics endpoint main started first.
//
// Threading: main's thread; blocks.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "daemon/replication/replicated_controller.h"
#include "daemon/replication/replication_metrics.h"
#include "daemon/replication/standby_service.h"

namespace gantry::replication {

struct StandbyPorts {
  std::string listen;  // HOST:PORT, port 0: any free; empty: none
  std::string socket;  // unix socket path; empty: none
  std::shared_ptr<grpc::ServerCredentials> tcp_credentials;
};

struct Elected {
  std::unique_ptr<ReplicatedController> controller;
  // The replication metrics, sampled from the standby phase on; they read
  // `controller`, so they must go first (they are declared after it).
  std::unique_ptr<ReplicationMetrics> metrics;
  // --listen with the port the standby was given (when it asked for 0).
  std::string listen;
  // The standby's server still answers (pointing callers at this
  // controller) until the controller's own server listens on the same
  // ports: call CloseStandbyPorts then, so there is no moment when a
  // client or agent finds the port closed and backs off.
  // In this order: the server goes before the endpoint it serves, and
  // the endpoint before the service it answers for.
  std::unique_ptr<StandbyService> standby_service;
  std::unique_ptr<grpc::CallbackGenericService> standby_endpoint;
  std::unique_ptr<grpc::Server> standby_server;
  void CloseStandbyPorts();
};

// `options.address` empty: derived from the bound port (the host name for
// a wildcard host). `metrics`: where the replication metrics go (null:
// none), from now on. Errors: the ports cannot be bound (UNAVAILABLE), bad
// etcd endpoints, or WaitUntilLeader's.
absl::StatusOr<Elected> StandUntilElected(
    ReplicationOptions options, RocksDbStore& local,
    ReplicatedController::StepDown step_down, const StandbyPorts& ports,
    prometheus::Registry* metrics = nullptr);

}  // namespace gantry::replication
