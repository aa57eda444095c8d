// A standby answers on both its ports, the TCP listener and the unix
// socket, with where the leader is: one StandbyService behind two servers
// (gRPC aborts when one generic service is registered with two).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include <grpcpp/grpcpp.h>

#include "daemon/replication/standby_service.h"
#include "gantry/v1/client.grpc.pb.h"

namespace gantry::replication {
namespace standby_service_test {

grpc::Status AskListJobs(const std::string& target,
                         std::string* leader_metadata) {
  auto channel =
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  auto stub = v1::ClientService::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  v1::ListJobsRequest request;
  v1::ListJobsResponse response;
  grpc::Status status = stub->ListJobs(&context, request, &response);
  const auto& trailers = context.GetServerTrailingMetadata();
  auto leader = trailers.find(kLeaderMetadataKey);
  if (leader != trailers.end()) {
    leader_metadata->assign(leader->second.data(), leader->second.size());
  }
  return status;
}

TEST_CASE("A standby answers on its TCP port and its unix socket") {
  const std::filesystem::path socket =
      std::filesystem::temp_directory_path() /
      ("gantry-standby-" + std::to_string(getpid()) + ".sock");
  StandbyService standby("ctl2");
  v1::ControllerMember leader;
  leader.set_name("ctl1");
  leader.set_address("ctl1:6817");
  standby.SetLeader(leader);

  auto tcp_endpoint = standby.NewEndpoint();
  grpc::ServerBuilder tcp_builder;
  int port = 0;
  tcp_builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                               &port);
  tcp_builder.RegisterCallbackGenericService(tcp_endpoint.get());
  std::unique_ptr<grpc::Server> tcp = tcp_builder.BuildAndStart();
  REQUIRE(tcp);
  REQUIRE(port > 0);

  auto socket_endpoint = standby.NewEndpoint();
  grpc::ServerBuilder socket_builder;
  socket_builder.AddListeningPort("unix:" + socket.string(),
                                  grpc::InsecureServerCredentials());
  socket_builder.RegisterCallbackGenericService(socket_endpoint.get());
  std::unique_ptr<grpc::Server> local = socket_builder.BuildAndStart();
  REQUIRE(local);

  for (const std::string& target :
       {"127.0.0.1:" + std::to_string(port), "unix:" + socket.string()}) {
    std::string leader_address;
    grpc::Status status = AskListJobs(target, &leader_address);
    INFO(target);
    CHECK(status.error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK(status.error_message() ==
          "gantryd ctl2 is a standby; the leader is ctl1 at ctl1:6817");
    CHECK(leader_address == "ctl1:6817");
  }
  // Both servers answer the same, changing, answer.
  standby.SetLeader(std::nullopt);
  standby.SetTrouble("etcd has no quorum");
  std::string none;
  grpc::Status status = AskListJobs("unix:" + socket.string(), &none);
  CHECK(status.error_message() ==
        "gantryd ctl2 is a standby and no controller leads at the moment "
        "(etcd has no quorum)");
  CHECK(none.empty());
  local->Shutdown();
  tcp->Shutdown();
}

}  // namespace standby_service_test
}  // namespace gantry::replication
