// The method names credentials are bound to: each must be the RPC of the
// service that takes its request type, so that the table and client.proto
// cannot drift apart.

#include "common/rpc_methods.h"

#include <catch2/catch.hpp>
#include <string>

#include "gantry/v1/agent.pb.h"

namespace gantry {
namespace rpc_methods_test {

template <class Request>
void CheckNamesTheRpcTaking() {
  const google::protobuf::Descriptor* request = Request::descriptor();
  INFO(request->full_name());
  // client.proto's service (some requests are defined in files it imports).
  const google::protobuf::ServiceDescriptor* service =
      v1::SubmitRequest::descriptor()->file()->FindServiceByName(
          "ClientService");
  REQUIRE(service != nullptr);
  const google::protobuf::MethodDescriptor* method =
      service->FindMethodByName(std::string(kMethodFor<Request>));
  REQUIRE(method != nullptr);
  CHECK(method->input_type() == request);
}

TEST_CASE("Each client method name is the RPC taking its request") {
  CheckNamesTheRpcTaking<v1::SubmitRequest>();
  CheckNamesTheRpcTaking<v1::SubmitStreamRequest>();
  CheckNamesTheRpcTaking<v1::ListJobsRequest>();
  CheckNamesTheRpcTaking<v1::StreamJobsRequest>();
  CheckNamesTheRpcTaking<v1::GetJobRequest>();
  CheckNamesTheRpcTaking<v1::CancelRequest>();
  CheckNamesTheRpcTaking<v1::HoldRequest>();
  CheckNamesTheRpcTaking<v1::ListNodesRequest>();
  CheckNamesTheRpcTaking<v1::ClusterStatusRequest>();
  CheckNamesTheRpcTaking<v1::ReportProgressRequest>();
  CheckNamesTheRpcTaking<v1::DrainRequest>();
  CheckNamesTheRpcTaking<v1::ImportTopologyRequest>();
  CheckNamesTheRpcTaking<v1::GetTopologyRequest>();
  CheckNamesTheRpcTaking<v1::LaunchStepRequest>();
  CheckNamesTheRpcTaking<v1::WaitStepRequest>();
  CheckNamesTheRpcTaking<v1::AccountingRequest>();
  CheckNamesTheRpcTaking<v1::SchedulerReportRequest>();
  CheckNamesTheRpcTaking<v1::RequeueRequest>();
  CheckNamesTheRpcTaking<v1::UpdateJobRequest>();
  CheckNamesTheRpcTaking<v1::EndAllocationRequest>();
  CheckNamesTheRpcTaking<v1::KeepAllocationRequest>();
  CheckNamesTheRpcTaking<v1::HandoverRequest>();
  CheckNamesTheRpcTaking<v1::ListDatasetCacheRequest>();
  CheckNamesTheRpcTaking<v1::PrefetchDatasetRequest>();
  CheckNamesTheRpcTaking<v1::EvictDatasetRequest>();
  // Every RPC is listed above: a new one needs its entry in the table.
  CHECK(v1::SubmitRequest::descriptor()
            ->file()
            ->FindServiceByName("ClientService")
            ->method_count() == 25);
}

TEST_CASE("The agent's method name is its stream's RPC") {
  const google::protobuf::ServiceDescriptor* service =
      v1::AgentMessage::descriptor()->file()->FindServiceByName("AgentService");
  REQUIRE(service != nullptr);
  CHECK(service->FindMethodByName(std::string(kAgentConnectMethod)) != nullptr);
}

// Credentials already out there keep working: the names on the wire.
TEST_CASE("Method names on the wire stay as they were") {
  CHECK(kMethodFor<v1::SubmitRequest> == "Submit");
  CHECK(kMethodFor<v1::SubmitStreamRequest> == "SubmitStream");
  CHECK(kMethodFor<v1::CancelRequest> == "Cancel");
  CHECK(kMethodFor<v1::DrainRequest> == "Drain");
  CHECK(kAgentConnectMethod == "Connect");
}

}  // namespace rpc_methods_test
}  // namespace gantry
