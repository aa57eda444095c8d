// Labels of the RPC counters: method names are bounded to the services'
// methods, and status codes are spelled as gRPC documents them.
#include "daemon/rpc/rpc_metrics_interceptor.h"

#include <map>
#include <string>

#include <prometheus/registry.h>
#include <catch2/catch.hpp>

#include "gantry/v1/agent.grpc.pb.h"
#include "gantry/v1/client.grpc.pb.h"

namespace gantry {
namespace rpc_metrics_interceptor_test {

TEST_CASE("the known methods come from the linked service descriptors",
          "[metrics]") {
  // Using a message of each file links in (and so registers) its
  // descriptors, as the services registered in gantryd do.
  REQUIRE(v1::SubmitRequest::descriptor() != nullptr);
  REQUIRE(v1::AgentMessage::descriptor() != nullptr);
  const std::set<std::string> known =
      RpcMethodPaths({v1::ClientService::service_full_name(),
                      v1::AgentService::service_full_name(), "no.such.Svc"});
  CHECK(known.count("/gantry.v1.ClientService/Submit") == 1);
  CHECK(known.count("/gantry.v1.AgentService/Connect") == 1);
  CHECK(RpcMethodLabel("/gantry.v1.ClientService/Submit", known) ==
        "gantry.v1.ClientService/Submit");
}

TEST_CASE("any other path is one label, so clients cannot add series",
          "[metrics]") {
  const std::set<std::string> known = {"/gantry.v1.ClientService/Submit"};
  CHECK(RpcMethodLabel("/gantry.v1.ClientService/Nope", known) == "unknown");
  CHECK(RpcMethodLabel("gantry.v1.ClientService/Submit", known) == "unknown");
  CHECK(RpcMethodLabel("", known) == "unknown");
}

TEST_CASE("a stream's service reports its end under the stream's label",
          "[metrics]") {
  prometheus::Registry registry;
  RpcMetricsInterceptorFactory metrics(registry,
                                       {"/gantry.v1.AgentService/Connect"},
                                       {"/gantry.v1.AgentService/Connect"});
  metrics.CountHandled("/gantry.v1.AgentService/Connect",
                       grpc::StatusCode::RESOURCE_EXHAUSTED);
  metrics.CountHandled("/not.Known/Method", grpc::StatusCode::OK);
  std::map<std::string, double> handled;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != "gantry_rpc_handled_total") continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::string key;
      for (const prometheus::ClientMetric::Label& label : metric.label) {
        key += label.name + "=" + label.value + ";";
      }
      handled[key] = metric.counter.value;
    }
  }
  CHECK(handled ==
        std::map<std::string, double>{
            {"code=RESOURCE_EXHAUSTED;method=gantry.v1.AgentService/Connect;",
             1.0},
            {"code=OK;method=unknown;", 1.0}});
}

TEST_CASE("status codes are named as in the gRPC documentation", "[metrics]") {
  CHECK(StatusCodeName(grpc::StatusCode::OK) == "OK");
  CHECK(StatusCodeName(grpc::StatusCode::INVALID_ARGUMENT) ==
        "INVALID_ARGUMENT");
  CHECK(StatusCodeName(grpc::StatusCode::PERMISSION_DENIED) ==
        "PERMISSION_DENIED");
  CHECK(StatusCodeName(grpc::StatusCode::UNAUTHENTICATED) == "UNAUTHENTICATED");
  CHECK(StatusCodeName(static_cast<grpc::StatusCode>(999)) == "UNKNOWN");
}

}  // namespace rpc_metrics_interceptor_test
}  // namespace gantry
