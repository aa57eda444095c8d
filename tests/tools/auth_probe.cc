// gantry-auth-probe: sends one request to gantryd with exactly the MUNGE
// credential it is given (or none), so tests can present forged, replayed,
// misbound and other-cluster credentials that the real CLI never would.
//
//   gantry-auth-probe TARGET METHOD [CREDENTIAL] [BODY OPTIONS]
//   gantry-auth-probe --payload METHOD [BODY OPTIONS]
//
// METHOD is ListNodes, StreamJobs (every job, as a stream of pages),
// Drain (of node "node01", with a reason), Cancel (--job ID), Submit (a
// held one-task job named --name NAME in --dir DIR) or Connect (an agent
// stream, which sends nothing and waits for the verdict). --payload prints the
// payload a credential for that exact request must carry
// (common/request_binding.h), so a test can have munged make one as any user
// and send it with another body. Prints "OK" (for Submit, "OK <job id>") or
// "CODE: message" and exits 0 on OK, 1 when refused.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "common/munge_credential.h"
#include "common/request_binding.h"
#include "gantry/v1/agent.grpc.pb.h"
#include "gantry/v1/client.grpc.pb.h"

namespace {

struct Body {
  uint64_t job = 0;
  std::string name = "auth-probe";
  std::string dir = "/tmp";
};

int Report(const grpc::Status& status, const std::string& detail = "") {
  if (status.ok()) {
    std::cout << "OK" << detail << "\n";
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

gantry::v1::DrainRequest DrainBody() {
  gantry::v1::DrainRequest request;
  request.add_nodes("node01");
  request.set_reason("auth probe");
  request.set_user("root");  // a claim; only the credential counts
  return request;
}

gantry::v1::CancelRequest CancelBody(const Body& body) {
  gantry::v1::CancelRequest request;
  request.add_job_ids(body.job);
  return request;
}

gantry::v1::SubmitRequest SubmitBody(const Body& body) {
  gantry::v1::SubmitRequest request;
  gantry::v1::JobSpec& spec = *request.mutable_spec();
  spec.set_name(body.name);
  spec.set_nodes(1);
  spec.set_ntasks_per_node(1);
  spec.set_cpus_per_task(1);
  spec.set_working_dir(body.dir);
  spec.set_submit_dir(body.dir);
  spec.set_script("#!/bin/bash\ntrue\n");
  spec.set_hold(true);  // stays pending: nothing runs
  return request;
}

// The request METHOD sends; null for Connect and unknown methods.
std::unique_ptr<google::protobuf::MessageLite> RequestFor(
    const std::string& method, const Body& body) {
  if (method == "ListNodes") {
    return std::make_unique<gantry::v1::ListNodesRequest>();
  }
  if (method == "StreamJobs") {
    auto request = std::make_unique<gantry::v1::StreamJobsRequest>();
    request->mutable_listing()->set_all(true);
    return request;
  }
  if (method == "Drain") {
    return std::make_unique<gantry::v1::DrainRequest>(DrainBody());
  }
  if (method == "Cancel") {
    return std::make_unique<gantry::v1::CancelRequest>(CancelBody(body));
  }
  if (method == "Submit") {
    return std::make_unique<gantry::v1::SubmitRequest>(SubmitBody(body));
  }
  return nullptr;
}

int Usage() {
  std::cerr << "usage: gantry-auth-probe TARGET "
               "ListNodes|StreamJobs|Drain|Cancel|Submit|Connect [CREDENTIAL] "
               "[--job ID] [--name NAME] [--dir DIR]\n"
               "       gantry-auth-probe --payload METHOD [--job ID] "
               "[--name NAME] [--dir DIR]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  Body body;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--job" && has_value) {
      body.job = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--name" && has_value) {
      body.name = argv[++i];
    } else if (arg == "--dir" && has_value) {
      body.dir = argv[++i];
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() < 2 || positional.size() > 3) return Usage();
  const std::string method = positional[1];
  std::unique_ptr<google::protobuf::MessageLite> request =
      RequestFor(method, body);
  if (positional[0] == "--payload") {
    if (!request) return Usage();
    std::cout << gantry::MungePayloadForRequest(method, *request) << "\n";
    return 0;
  }
  if (!request && method != "Connect") {
    std::cerr << "gantry-auth-probe: unknown method " << method << "\n";
    return 2;
  }
  auto channel =
      grpc::CreateChannel(positional[0], grpc::InsecureChannelCredentials());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(method == "Connect" ? 2 : 10));
  if (positional.size() == 3) {
    context.AddMetadata(gantry::kMungeMetadataKey, positional[2]);
  }
  if (method == "Connect") return Report(CallConnect(channel, context));
  auto stub = gantry::v1::ClientService::NewStub(channel);
  if (method == "ListNodes") {
    gantry::v1::ListNodesResponse response;
    return Report(stub->ListNodes(
        &context, static_cast<gantry::v1::ListNodesRequest&>(*request),
        &response));
  }
  if (method == "StreamJobs") {
    auto reader = stub->StreamJobs(
        &context, static_cast<gantry::v1::StreamJobsRequest&>(*request));
    gantry::v1::ListJobsResponse page;
    size_t jobs = 0;
    while (reader->Read(&page)) jobs += static_cast<size_t>(page.jobs_size());
    grpc::Status status = reader->Finish();
    return Report(status, status.ok() ? " " + std::to_string(jobs) : "");
  }
  if (method == "Drain") {
    gantry::v1::DrainResponse response;
    return Report(stub->Drain(
        &context, static_cast<gantry::v1::DrainRequest&>(*request), &response));
  }
  if (method == "Cancel") {
    gantry::v1::CancelResponse response;
    grpc::Status status = stub->Cancel(
        &context, static_cast<gantry::v1::CancelRequest&>(*request), &response);
    return Report(status, status.ok() ? " " + response.ShortDebugString() : "");
  }
  gantry::v1::SubmitResponse response;
  grpc::Status status = stub->Submit(
      &context, static_cast<gantry::v1::SubmitRequest&>(*request), &response);
  return Report(status, " " + std::to_string(response.job_id()));
}
