// gantry-raw-request: sends one request, written in protobuf text format on
// stdin, to gantryd as it is: the fields a well-behaved CLI would never
// fill (control characters in a job name, a time limit of 2^64-1), for
// tests/integration/test_hostile_input.py. A MUNGE credential from
// $GANTRY_MUNGE_SOCKET (or munged's default) is attached, as the CLI does.
//
//   gantry-raw-request TARGET Submit|Drain|ReportProgress|ImportTopology|
//       ListDatasetCache|PrefetchDataset|EvictDataset < request.txtpb
//
// Prints "OK" and the response, or "CODE: message"; exits 0 on OK, 1 when
// refused, 2 on a usage error.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include <google/protobuf/text_format.h>
#include <grpcpp/grpcpp.h>

#include "common/munge_credential.h"
#include "common/request_binding.h"
#include "gantry/v1/client.grpc.pb.h"

namespace {

using gantry::v1::ClientService;

template <typename Request, typename Response, typename Call>
int Send(const std::string& text, const std::string& method, Call call) {
  Request request;
  if (!google::protobuf::TextFormat::ParseFromString(text, &request)) {
    std::cerr << "gantry-raw-request: stdin is not a " << method
              << " request in text format\n";
    return 2;
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(20));
  const char* socket = std::getenv(gantry::kMungeSocketVariable);
  absl::StatusOr<std::string> credential =
      gantry::EncodeRequestCredential(socket ? socket : "", method, request);
  if (credential.ok()) {
    context.AddMetadata(gantry::kMungeMetadataKey, *credential);
  }
  Response response;
  grpc::Status status = call(&context, request, &response);
  if (!status.ok()) {
    std::cout << static_cast<int>(status.error_code()) << ": "
              << status.error_message() << "\n";
    return 1;
  }
  std::string printed;
  google::protobuf::TextFormat::PrintToString(response, &printed);
  std::cout << "OK\n" << printed;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: gantry-raw-request TARGET "
                 "Submit|Drain|ReportProgress|ImportTopology|"
                 "ListDatasetCache|PrefetchDataset|EvictDataset < request\n";
    return 2;
  }
  const std::string method = argv[2];
  const std::string text(std::istreambuf_iterator<char>(std::cin), {});
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(256 << 20);
  auto stub = ClientService::NewStub(grpc::CreateCustomChannel(
      argv[1], grpc::InsecureChannelCredentials(), args));
  using namespace gantry::v1;
  if (method == "Submit") {
    return Send<SubmitRequest, SubmitResponse>(
        text, method, [&](auto* context, const auto& request, auto* response) {
          return stub->Submit(context, request, response);
        });
  }
  if (method == "Drain") {
    return Send<DrainRequest, DrainResponse>(
        text, method, [&](auto* context, const auto& request, auto* response) {
          return stub->Drain(context, request, response);
        });
  }
  if (method == "ReportProgress") {
    return Send<ReportProgressRequest, ReportProgressResponse>(
        text, method, [&](auto* context, const auto& request, auto* response) {
          return stub->ReportProgress(context, request, response);
        });
  }
  if (method == "ImportTopology") {
    return Send<ImportTopologyRequest, TopologyReport>(
        text, method, [&](auto* context, const auto& request, auto* response) {
          return stub->ImportTopology(context, request, response);
        });
  }
  if (method == "ListDatasetCache") {
    return Send<ListDatasetCacheRequest, ListDatasetCacheResponse>(
        text, method, [&](auto* context, const auto& request, auto* response) {
          return stub->ListDatasetCache(context, request, response);
        });
  }
  if (method == "PrefetchDataset") {
    return Send<PrefetchDatasetRequest, DatasetCacheActionResponse>(
        text, method, [&](auto* context, const auto& request, auto* response) {
          return stub->PrefetchDataset(context, request, response);
        });
  }
  if (method == "EvictDataset") {
    return Send<EvictDatasetRequest, DatasetCacheActionResponse>(
        text, method, [&](auto* context, const auto& request, auto* response) {
          return stub->EvictDataset(context, request, response);
        });
  }
  std::cerr << "gantry-raw-request: unknown method " << method << "\n";
  return 2;
}
