// Counts gantryd's gRPC calls for Prometheus: gantry_rpc_started_total
// {method} when a call arrives, gantry_rpc_handled_total{method, code} when
// its status is sent. A server interceptor, so the services need not know,
// except for long-lived streams (the agents'): gRPC runs a call's
// interceptors on every message, which for thousands of nodes' heartbeats
// is a few percent of a core, so those are counted when they start and
// their service reports their end (CountHandled).
//
// Only the methods named at construction get their own label value; any
// other path a client sends is counted as method="unknown", so a client
// cannot grow the number of series without bound.
//
// Thread-safe: gRPC creates interceptors from its own threads at any time;
// the factory holds only immutable data and thread-safe metric families.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/support/server_interceptor.h>
#include <grpcpp/support/status.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

namespace gantry {

// "OK", "INVALID_ARGUMENT", ...: the spelling of the gRPC documentation.
std::string_view StatusCodeName(grpc::StatusCode code);

// The label for a call's path ("/gantry.v1.ClientService/Submit" ->
// "gantry.v1.ClientService/Submit"); "unknown" unless the path is in `known`.
std::string RpcMethodLabel(std::string_view path,
                           const std::set<std::string>& known);

// The paths of every method of the named services, from the protobuf
// descriptors linked into the binary ("/gantry.v1.ClientService/Submit").
// A service that is not linked in contributes nothing.
std::set<std::string> RpcMethodPaths(
    const std::vector<std::string>& service_full_names);

class RpcMetricsInterceptorFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // Registers the families in `registry`, which must outlive the server
  // this factory is given to. `known_paths` as from RpcMethodPaths;
  // `stream_paths`: those of them left to their service to report.
  RpcMetricsInterceptorFactory(prometheus::Registry& registry,
                               std::set<std::string> known_paths,
                               std::set<std::string> stream_paths = {});

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

  // A stream's status was sent ("/gantry.v1.AgentService/Connect").
  void CountHandled(std::string_view path, grpc::StatusCode code);

 private:
  const std::set<std::string> known_paths_;
  const std::set<std::string> stream_paths_;
  prometheus::Family<prometheus::Counter>& started_;
  prometheus::Family<prometheus::Counter>& handled_;
};

}  // namespace gantry
