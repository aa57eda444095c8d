#include "cli/controller_client.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/munge_credential.h"
#include "common/request_binding.h"
#include "common/request_limits.h"
#include "common/rpc_methods.h"
#include "common/terminal_text.h"
#include "common/tls_credentials.h"

namespace gantry::cli {

std::string ResolveControllerTarget(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv(kControllerVariable); env && *env) {
    return env;
  }
  return kDefaultController;
}

namespace {

// Calls `call` for one page after another until the next_page_token is
// empty, moving each page's jobs to `jobs`.
template <class Response, class Request, class Call>
absl::Status AllPages(Request request, std::vector<v1::JobRecord>& jobs,
                      Call call) {
  request.clear_page_token();
  do {
    Response page;
    if (absl::Status status = call(request, page); !status.ok()) {
      return status;
    }
    for (v1::JobRecord& job : *page.mutable_jobs()) {
      jobs.push_back(std::move(job));
    }
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return absl::OkStatus();
}

// gantry leaves with _Exit once its output is written (cli/main.cc), and
// its channels (one per command) are kept until then: destroying the last
// one tears gRPC down, which joins its threads one by one. On a node busy
// starting a gang, that took longer than the request itself.
std::shared_ptr<grpc::Channel> KeepForProcess(
    std::shared_ptr<grpc::Channel> channel) {
  static std::mutex mutex;
  static auto* kept = new std::vector<std::shared_ptr<grpc::Channel>>();
  std::lock_guard lock(mutex);
  kept->push_back(channel);
  return channel;
}

// gantryd refuses requests over its receive limit (gRPC answers
// RESOURCE_EXHAUSTED, which a client could mistake for "busy"): say so
// before sending, naming the limit.
absl::Status CheckRequestSize(const google::protobuf::Message& request,
                              std::string_view what) {
  const size_t bytes = request.ByteSizeLong();
  if (bytes <= limits::kMaxClientRequestBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      std::string(what), " is ", bytes,
      " bytes; the controller accepts at most ", limits::kMaxClientRequestBytes,
      " bytes (", limits::kMaxClientRequestBytes >> 20,
      " MiB) in one request"));
}

bool IsBusy(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
         absl::StartsWith(status.error_message(), limits::kBusyMessagePrefix);
}

}  // namespace

ControllerClient::ControllerClient(std::string target)
    : target_(std::move(target)), tls_(ClientTlsFromEnvironment()) {
  if (const char* socket = std::getenv(kMungeSocketVariable)) {
    munge_socket_ = socket;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(64 << 20);  // topology imports
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentialsFor(target_, tls_, args);
  if (!credentials.ok()) {
    // No channel at all: a request must not go out in the clear because
    // the CA file named for it could not be read.
    setup_error_ = credentials.status();
    return;
  }
  stub_ = v1::ClientService::NewStub(
      KeepForProcess(grpc::CreateCustomChannel(target_, *credentials, args)));
}

template <class Request>
absl::Status ControllerClient::Prepare(grpc::ClientContext& context,
                                       const Request& request) {
  if (!setup_error_.ok()) return setup_error_;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  // The credential is bound to this very request, so one captured on the
  // way cannot be spent on another; munged refuses a second use.
  absl::StatusOr<std::string> credential =
      EncodeRequestCredential(munge_socket_, kMethodFor<Request>, request);
  if (credential.ok()) {
    context.AddMetadata(kMungeMetadataKey, *credential);
    credential_error_.clear();
  } else {
    // Sent without one: a controller with authentication off still answers,
    // and one with it on refuses with a message completed by this error.
    credential_error_ = std::string(credential.status().message());
  }
  return absl::OkStatus();
}

absl::Status ControllerClient::Convert(const grpc::Status& raw) const {
  if (raw.ok()) return absl::OkStatus();
  // Messages may quote what a request carried (a name, a path): printed on
  // a terminal, they must not carry escape sequences.
  const grpc::Status status(raw.error_code(),
                            EscapeForTerminal(raw.error_message()));
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::UnavailableError(absl::StrCat(
        "cannot reach the controller at ", target_, " (",
        status.error_message(),
        "); set --controller, GANTRY_CONTROLLER or controller in the [client] "
        "table of /etc/gantry/gantry.toml",
        TlsConnectHint(target_, tls_)));
  }
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED &&
      !credential_error_.empty()) {
    return absl::UnauthenticatedError(
        absl::StrCat(status.error_message(), "; ", credential_error_));
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

absl::Status ControllerClient::Submit(const v1::SubmitRequest& request,
                                      v1::SubmitResponse& response) {
  if (request.spec().script().size() > limits::kMaxBatchScriptBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the batch script is ", request.spec().script().size(),
                     " bytes; the limit is ", limits::kMaxBatchScriptBytes,
                     " bytes (", limits::kMaxBatchScriptBytes >> 20, " MiB)"));
  }
  if (absl::Status size = CheckRequestSize(request, "the submission");
      !size.ok()) {
    return size;
  }
  // A busy controller stored nothing: ask again, with backoff, for a
  // while. Any other RESOURCE_EXHAUSTED (a message over gRPC's limit) is
  // final.
  auto delay = std::chrono::milliseconds(50);
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::minutes(2);
  bool told = false;
  while (true) {
    grpc::ClientContext context;
    if (absl::Status ready = Prepare(context, request); !ready.ok()) {
      return ready;
    }
    grpc::Status status = stub_->Submit(&context, request, &response);
    if (!IsBusy(status) || std::chrono::steady_clock::now() > give_up) {
      return Convert(status);
    }
    if (!told) {
      std::cerr << "gantry: the controller is busy; retrying\n";
      told = true;
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(2000));
  }
}

absl::Status ControllerClient::ListJobs(const v1::ListJobsRequest& request,
                                        v1::ListJobsResponse& response) {
  grpc::ClientContext context;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->ListJobs(&context, request, &response));
}

absl::Status ControllerClient::ListAllJobs(v1::ListJobsRequest request,
                                           std::vector<v1::JobRecord>& jobs) {
  return AllPages<v1::ListJobsResponse>(
      std::move(request), jobs,
      [this](const v1::ListJobsRequest& r, v1::ListJobsResponse& page) {
        return ListJobs(r, page);
      });
}

absl::Status ControllerClient::GetJob(uint64_t job_id,
                                      v1::GetJobResponse& response) {
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  return GetJob(request, response);
}

absl::Status ControllerClient::GetJob(const v1::GetJobRequest& request,
                                      v1::GetJobResponse& response) {
  grpc::ClientContext context;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->GetJob(&context, request, &response));
}

absl::Status ControllerClient::Accounting(v1::AccountingRequest request,
                                          std::vector<v1::JobRecord>& jobs,
                                          std::string* cluster_name) {
  return AllPages<v1::AccountingResponse>(
      std::move(request), jobs,
      [this, cluster_name](const v1::AccountingRequest& r,
                           v1::AccountingResponse& page) {
        grpc::ClientContext context;
        if (absl::Status ready = Prepare(context, r); !ready.ok()) {
          return ready;
        }
        absl::Status status = Convert(stub_->Accounting(&context, r, &page));
        if (status.ok() && cluster_name != nullptr) {
          *cluster_name = page.cluster_name();
        }
        return status;
      });
}

absl::Status ControllerClient::SchedulerReport(
    v1::SchedulerReportResponse& response) {
  v1::SchedulerReportRequest request;
  grpc::ClientContext context;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->SchedulerReport(&context, request, &response));
}

absl::Status ControllerClient::Cancel(const v1::CancelRequest& request,
                                      v1::CancelResponse& response) {
  grpc::ClientContext context;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->Cancel(&context, request, &response));
}

absl::Status ControllerClient::Hold(const v1::HoldRequest& request,
                                    v1::HoldResponse& response) {
  grpc::ClientContext context;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->Hold(&context, request, &response));
}

absl::Status ControllerClient::Requeue(const v1::RequeueRequest& request,
                                       v1::RequeueResponse& response) {
  grpc::ClientContext context;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->Requeue(&context, request, &response));
}

absl::Status ControllerClient::UpdateJob(const v1::UpdateJobRequest& request,
                                         v1::UpdateJobResponse& response) {
  grpc::ClientContext context;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->UpdateJob(&context, request, &response));
}

absl::Status ControllerClient::ListNodes(v1::ListNodesResponse& response) {
  grpc::ClientContext context;
  const v1::ListNodesRequest request;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->ListNodes(&context, request, &response));
}

absl::Status ControllerClient::ClusterStatus(
    v1::ClusterStatusResponse& response) {
  grpc::ClientContext context;
  const v1::ClusterStatusRequest request;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->ClusterStatus(&context, request, &response));
}

absl::Status ControllerClient::ReportProgress(
    const v1::ReportProgressRequest& request,
    v1::ReportProgressResponse& response) {
  grpc::ClientContext context;
  if (absl::Status size = CheckRequestSize(request, "the progress report");
      !size.ok()) {
    return size;
  }
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->ReportProgress(&context, request, &response));
}

absl::Status ControllerClient::Drain(const v1::DrainRequest& request,
                                     v1::DrainResponse& response) {
  grpc::ClientContext context;
  if (absl::Status size = CheckRequestSize(request, "the drain request");
      !size.ok()) {
    return size;
  }
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->Drain(&context, request, &response));
}

absl::Status ControllerClient::ImportTopology(
    const v1::ImportTopologyRequest& request, v1::TopologyReport& response) {
  grpc::ClientContext context;
  if (absl::Status size = CheckRequestSize(request, "the topology file");
      !size.ok()) {
    return size;
  }
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->ImportTopology(&context, request, &response));
}

absl::Status ControllerClient::GetTopology(v1::TopologyReport& response) {
  grpc::ClientContext context;
  const v1::GetTopologyRequest request;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->GetTopology(&context, request, &response));
}

absl::Status ControllerClient::LaunchStep(const v1::LaunchStepRequest& request,
                                          v1::LaunchStepResponse& response) {
  grpc::ClientContext context;
  if (absl::Status size = CheckRequestSize(request, "the step request");
      !size.ok()) {
    return size;
  }
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->LaunchStep(&context, request, &response));
}

absl::Status ControllerClient::EndAllocation(
    const v1::EndAllocationRequest& request,
    v1::EndAllocationResponse& response) {
  grpc::ClientContext context;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  return Convert(stub_->EndAllocation(&context, request, &response));
}

absl::Status ControllerClient::KeepAllocation(
    const v1::KeepAllocationRequest& request,
    v1::KeepAllocationResponse& response, std::chrono::milliseconds wait) {
  grpc::ClientContext context;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  context.set_deadline(std::chrono::system_clock::now() + wait);
  return Convert(stub_->KeepAllocation(&context, request, &response));
}

absl::Status ControllerClient::WaitStep(const v1::WaitStepRequest& request,
                                        v1::WaitStepResponse& response,
                                        std::chrono::seconds wait) {
  grpc::ClientContext context;
  if (absl::Status ready = Prepare(context, request); !ready.ok()) {
    return ready;
  }
  context.set_deadline(std::chrono::system_clock::now() + wait);
  grpc::Status status = stub_->WaitStep(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::DeadlineExceededError("the step is still running");
  }
  return Convert(status);
}

}  // namespace gantry::cli
