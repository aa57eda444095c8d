// gantry-auth-probe: sends one request to gantryd with exactly the MUNGE
// credential it is given (or none), so tests can present forged, replayed,
// misbound and other-cluster credentials that the real CLI never would.
//
//   gantry-auth-probe TARGET METHOD [CREDENTIAL]
//
// METHOD is ListNodes, Drain (of node "node01", with a reason) or Connect
// (an agent stream, which sends nothing and waits for the verdict).
// Prints "OK" or "CODE: message" and exits 0 on OK, 1 when refused.
#include <chrono>
#include <iostream>
#include <string>

#include <grpcpp/grpcpp.h>

#include "common/munge_credential.h"
#include "gantry/v1/agent.grpc.pb.h"
#include "gantry/v1/client.grpc.pb.h"

namespace {

int Report(const grpc::Status& status) {
  if (status.ok()) {
    std::cout << "OK\n";
    return 0;
  }
  std::cout << static_cast<int>(status.error_code()) << ": "
            << status.error_message() << "\n";
  return 1;
}

grpc::Status CallConnect(const std::shared_ptr<grpc::Channel>& channel,
                         grpc::ClientContext& context) {
  auto stub = gantry::v1::AgentService::NewStub(channel);
  auto stream = stub->Connect(&context);
  // A refused stream ends at once; an admitted one waits for a Register
  // that never comes, so the deadline ends it with OK from our side.
  gantry::v1::ControllerMessage message;
  while (stream->Read(&message)) {
  }
  grpc::Status status = stream->Finish();
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return grpc::Status::OK;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::cerr << "usage: gantry-auth-probe TARGET ListNodes|Drain|Connect "
                 "[CREDENTIAL]\n";
    return 2;
  }
  const std::string method = argv[2];
  auto channel =
      grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(method == "Connect" ? 2 : 10));
  if (argc == 4) context.AddMetadata(gantry::kMungeMetadataKey, argv[3]);
  if (method == "Connect") return Report(CallConnect(channel, context));
  auto stub = gantry::v1::ClientService::NewStub(channel);
  if (method == "ListNodes") {
    gantry::v1::ListNodesResponse response;
    return Report(
        stub->ListNodes(&context, gantry::v1::ListNodesRequest(), &response));
  }
  if (method == "Drain") {
    gantry::v1::DrainRequest request;
    request.add_nodes("node01");
    request.set_reason("auth probe");
    request.set_user("root");  // a claim; only the credential counts
    gantry::v1::DrainResponse response;
    return Report(stub->Drain(&context, request, &response));
  }
  std::cerr << "gantry-auth-probe: unknown method " << method << "\n";
  return 2;
}
