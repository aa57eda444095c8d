// gantry-api-probe: calls gantryd's client API directly, as any program of
// a user could (no CLI in between), and prints the raw answer as JSON, so
// tests can check what the API itself gives away.
//
//   gantry-api-probe TARGET ListJobs [--all] [--page-size N]
//   gantry-api-probe TARGET StreamJobs [--all] [--page-size N]
//   gantry-api-probe TARGET GetJob JOB_ID
//
// Authenticates like the CLI (MUNGE, socket from GANTRY_MUNGE_SOCKET).
// ListJobs follows every page and prints {"pages": N, "jobs": [...]};
// StreamJobs reads every page of its stream and prints the same.
// Exits 0 on OK; prints "CODE: message" and exits 1 when refused.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include "common/munge_credential.h"
#include "common/request_binding.h"
#include "gantry/v1/client.grpc.pb.h"

namespace {

void Prepare(grpc::ClientContext& context, const std::string& method,
             const google::protobuf::MessageLite& request) {
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  const char* socket = std::getenv(gantry::kMungeSocketVariable);
  absl::StatusOr<std::string> credential =
      gantry::EncodeRequestCredential(socket ? socket : "", method, request);
  if (credential.ok()) {
    context.AddMetadata(gantry::kMungeMetadataKey, *credential);
  }
}

int Refused(const grpc::Status& status) {
  std::cout << static_cast<int>(status.error_code()) << ": "
            << status.error_message() << "\n";
  return 1;
}

std::string Json(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: gantry-api-probe TARGET ListJobs|StreamJobs [--all] "
                 "[--page-size N] | GetJob JOB_ID\n";
    return 2;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  auto stub = gantry::v1::ClientService::NewStub(grpc::CreateCustomChannel(
      argv[1], grpc::InsecureChannelCredentials(), args));
  const std::string method = argv[2];
  if (method == "GetJob" && argc == 4) {
    gantry::v1::GetJobRequest request;
    request.set_job_id(std::stoull(argv[3]));
    gantry::v1::GetJobResponse response;
    grpc::ClientContext context;
    Prepare(context, method, request);
    grpc::Status status = stub->GetJob(&context, request, &response);
    if (!status.ok()) return Refused(status);
    std::cout << Json(response) << "\n";
    return 0;
  }
  if (method != "ListJobs" && method != "StreamJobs") {
    std::cerr << "gantry-api-probe: unknown method " << method << "\n";
    return 2;
  }
  gantry::v1::ListJobsRequest request;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--all") {
      request.set_all(true);
    } else if (arg == "--page-size" && i + 1 < argc) {
      request.set_page_size(static_cast<uint32_t>(std::stoul(argv[++i])));
    } else {
      std::cerr << "gantry-api-probe: unknown argument " << arg << "\n";
      return 2;
    }
  }
  int pages = 0;
  std::string jobs;
  if (method == "StreamJobs") {
    gantry::v1::StreamJobsRequest stream_request;
    *stream_request.mutable_listing() = request;
    grpc::ClientContext context;
    Prepare(context, method, stream_request);
    auto reader = stub->StreamJobs(&context, stream_request);
    gantry::v1::ListJobsResponse response;
    while (reader->Read(&response)) {
      ++pages;
      for (const gantry::v1::JobRecord& job : response.jobs()) {
        jobs += (jobs.empty() ? "" : ",") + Json(job);
      }
    }
    grpc::Status status = reader->Finish();
    if (!status.ok()) return Refused(status);
    std::cout << "{\"pages\": " << pages << ", \"jobs\": [" << jobs << "]}\n";
    return 0;
  }
  do {
    gantry::v1::ListJobsResponse response;
    grpc::ClientContext context;
    Prepare(context, method, request);
    grpc::Status status = stub->ListJobs(&context, request, &response);
    if (!status.ok()) return Refused(status);
    ++pages;
    for (const gantry::v1::JobRecord& job : response.jobs()) {
      jobs += (jobs.empty() ? "" : ",") + Json(job);
    }
    request.set_page_token(response.next_page_token());
  } while (!request.page_token().empty());
  std::cout << "{\"pages\": " << pages << ", \"jobs\": [" << jobs << "]}\n";
  return 0;
}
