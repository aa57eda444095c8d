#include "cli/client/controller_client.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/munge_credential.h"
#include "common/mutex.h"
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

// Calls `call` for one page after another, into the page `next_page`
// gives, until the next_page_token is empty, handing each to `on_page`.
// Stops at the first error, `on_page`'s included.
template <class Request, class NextPage, class Call, class OnPage>
absl::Status EachPage(Request request, NextPage next_page, Call call,
                      OnPage on_page) {
  request.clear_page_token();
  do {
    auto& page = next_page();
    if (absl::Status status = call(request, page); !status.ok()) {
      return status;
    }
    if (absl::Status status = on_page(page); !status.ok()) return status;
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return absl::OkStatus();
}

// Every page, each made on the listing's arena so that its jobs move to
// `jobs` by pointer.
template <class Response, class Request, class Call>
absl::Status AllPages(Request request, JobListing& jobs, Call call) {
  return EachPage(
      std::move(request),
      [&]() -> Response& {
        return *google::protobuf::Arena::CreateMessage<Response>(&jobs.arena());
      },
      call,
      [&](Response& page) {
        jobs.TakeAll(*page.mutable_jobs());
        return absl::OkStatus();
      });
}

// gantry leaves with _Exit once its output is written (cli/main.cc), and
// its channels (one per command) are kept until then: destroying the last
// one tears gRPC down, which joins its threads one by one. On a node busy
// starting a gang, that took longer than the request itself.
std::shared_ptr<grpc::Channel> KeepForProcess(
    std::shared_ptr<grpc::Channel> channel) {
  static Mutex mutex;
  static auto* kept = new std::vector<std::shared_ptr<grpc::Channel>>();
  MutexLock lock(mutex);
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

// 128 random bits as 32 hex digits.
std::string RandomToken() {
  std::random_device random;
  std::string token;
  for (int i = 0; i < 4; ++i) {
    absl::StrAppend(&token, absl::Hex(random(), absl::kZeroPad8));
  }
  return token;
}

bool IsBusy(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
         absl::StartsWith(status.error_message(), limits::kBusyMessagePrefix);
}

// No answer came: the controller died, froze or was cut off with the call
// in flight (or the call never left).
bool Unanswered(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         status.error_code() == grpc::StatusCode::CANCELLED;
}

// gRPC's words for a call that failed before any connection was made: the
// request cannot have reached a controller.
bool NeverConnected(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE &&
         absl::StrContains(status.error_message(),
                           "failed to connect to all addresses");
}

constexpr char kOutcomeUnknownPayload[] =
    "type.gantry.dev/submission-outcome-unknown";

absl::Status OutcomeUnknown(const std::string& token,
                            const grpc::Status& last) {
  absl::Status unknown = absl::UnavailableError(absl::StrCat(
      "the outcome is unknown: the controller may have stored the job, but "
      "gave no answer for ",
      ControllerClient::kSubmissionOutcomeWindow.count(), " minutes (last: ",
      EscapeForTerminal(last.error_message()), "). Its submission token is ",
      token, ": look for it with `gantry queue --me --all --json | grep ",
      token, "` (then `gantry job ID`) before submitting again"));
  unknown.SetPayload(kOutcomeUnknownPayload, absl::Cord(token));
  return unknown;
}

}  // namespace

bool IsOutcomeUnknown(const absl::Status& status) {
  return status.GetPayload(kOutcomeUnknownPayload).has_value();
}

ControllerClient::ControllerClient(std::string target)
    : target_(std::move(target)),
      tls_(ClientTlsFromEnvironment()),
      controllers_(target_, [this](const std::string& address, bool several) {
        return MakeTarget(address, several);
      }) {
  if (const char* socket = std::getenv(kMungeSocketVariable)) {
    munge_socket_ = socket;
  }
}

ControllerClient::Target ControllerClient::MakeTarget(const std::string& target,
                                                      bool several) const {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(64 << 20);  // topology imports
  // A standby closes its ports for a moment when it takes over: redial
  // within a tenth of a second, not after gRPC's growing backoff (1 s,
  // 1.6 s, 2.6 s, ... : ten seconds lost in a failover).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  if (several) {
    // A leader frozen (SIGSTOP, a hung host) accepts connections and
    // answers nothing: pings find it out in two seconds, and the call
    // moves on to the next controller instead of waiting out its deadline.
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 1000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 1000);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    args.SetInt(GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
    // A frozen one also accepts TCP connections (the kernel does) and
    // never answers the HTTP/2 handshake: give up on it in 2 s, not 20.
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 2000);
  }
  Target added;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentialsFor(target, tls_, args);
  if (credentials.ok()) {
    added.stub = v1::ClientService::NewStub(
        KeepForProcess(grpc::CreateCustomChannel(target, *credentials, args)));
  } else {
    // No channel at all: a request must not go out in the clear because
    // the CA file named for it could not be read.
    added.setup_error = credentials.status();
  }
  return added;
}

template <class Request>
absl::Status ControllerClient::Prepare(grpc::ClientContext& context,
                                       const Request& request,
                                       std::chrono::milliseconds timeout) {
  if (!controllers_.current().setup_error.ok()) {
    return controllers_.current().setup_error;
  }
  context.set_deadline(std::chrono::system_clock::now() + timeout);
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

template <class Request, class Response>
absl::Status ControllerClient::Invoke(Method<Request, Response> method,
                                      const Request& request,
                                      Response& response, grpc::Status* raw,
                                      std::chrono::milliseconds timeout) {
  return InvokeCall(
      request,
      [&](Stub& stub, grpc::ClientContext& context) {
        return (stub.*method)(&context, request, &response);
      },
      raw, timeout);
}

template <class Request, class Call>
absl::Status ControllerClient::InvokeCall(const Request& request, Call call,
                                          grpc::Status* raw,
                                          std::chrono::milliseconds timeout) {
  // With several controllers (high availability), a standby's answer or an
  // unreachable controller is not the end: try the leader a standby names,
  // else the next one, for as long as an election takes. The request did
  // not reach a leader, so asking another is safe.
  const auto give_up = std::chrono::steady_clock::now() + kFailoverWindow;
  size_t tried_this_round = 0;
  // After a full round of refusals: a hand-over completes in tens of
  // milliseconds, an election after a crash in seconds.
  auto pause = std::chrono::milliseconds(25);
  last_call_may_have_arrived_ = false;
  while (true) {
    grpc::ClientContext context;
    if (absl::Status ready = Prepare(context, request, timeout); !ready.ok()) {
      return ready;
    }
    grpc::Status status = call(*controllers_.current().stub, context);
    if (raw) *raw = status;
    if (Unanswered(status) && !NeverConnected(status)) {
      last_call_may_have_arrived_ = true;
    }
    // CANCELLED: a standby closing its ports to take over cut the call.
    const bool elsewhere =
        status.error_code() == grpc::StatusCode::UNAVAILABLE ||
        status.error_code() == grpc::StatusCode::CANCELLED;
    const std::optional<std::string> leader =
        NamedLeader(context.GetServerTrailingMetadata());
    // A single configured controller that answers as a standby (it was
    // deposed, or the site lists one of a pair) names the leader: follow
    // it, as with a list.
    if (!elsewhere || (!controllers_.several() && !leader) ||
        std::chrono::steady_clock::now() > give_up) {
      return Convert(status);
    }
    controllers_.MoveOn(leader);
    if (++tried_this_round >= controllers_.size()) {
      // Everyone refused: an election is under way. Give it a moment.
      tried_this_round = 0;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(200));
    }
  }
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
        "cannot reach ",
        controllers_.several() ? "a leading controller among "
                               : "the controller at ",
        target_, " (", status.error_message(),
        "); set --controller, GANTRY_CONTROLLER or controller in the [client] "
        "table of /etc/gantry/gantry.toml",
        TlsConnectHint(controllers_.current_address(), tls_)));
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
  // One token for every try of this submission (SubmitRequest.
  // submission_token): a retry after a lost answer gets the same job.
  v1::SubmitRequest tokened = request;
  if (tokened.submission_token().empty() && !tokened.validate_only()) {
    tokened.set_submission_token(RandomToken());
  }
  // Asked again, with backoff, until the outcome is known or the window
  // closes: a busy controller stored nothing (any other RESOURCE_EXHAUSTED,
  // a message over gRPC's limit, is final); a call without an answer may
  // have stored the job, and only the controller's answer to the same
  // token can tell.
  auto delay = std::chrono::milliseconds(50);
  const auto give_up =
      std::chrono::steady_clock::now() + kSubmissionOutcomeWindow;
  bool told_busy = false;
  bool told_unanswered = false;
  bool may_be_stored = false;
  while (true) {
    grpc::Status raw;
    absl::Status status = Invoke(&Stub::Submit, tokened, response, &raw);
    const bool busy = IsBusy(raw);
    // Any try of the call (Invoke tries every controller of a list) may
    // have reached a controller that stored the job and then went away.
    may_be_stored = may_be_stored || last_call_may_have_arrived_;
    // A first call that could not connect stored nothing: say so at once
    // (a wrong --controller must not hang for minutes).
    const bool ask_again =
        busy || (Unanswered(raw) && may_be_stored && !tokened.validate_only());
    if (!ask_again) return status;
    if (std::chrono::steady_clock::now() > give_up) {
      return may_be_stored ? OutcomeUnknown(tokened.submission_token(), raw)
                           : status;
    }
    if (busy && !told_busy) {
      std::cerr << "gantry: the controller is busy; retrying\n";
      told_busy = true;
    } else if (!busy && !told_unanswered) {
      std::cerr << "gantry: no answer from the controller ("
                << EscapeForTerminal(raw.error_message())
                << "); asking again with the same submission token, which "
                   "never makes a second job\n";
      told_unanswered = true;
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(2000));
  }
}

absl::Status ControllerClient::SubmitAll(
    std::vector<v1::SubmitRequest> requests,
    const std::function<void(size_t, absl::StatusOr<uint64_t>)>& done) {
  // Unanswered submissions on the stream: gantryd reads up to 4,096; a
  // message carries at most 1,000 (client.proto). Smaller messages let the
  // first acks come back while later ones are still being written.
  constexpr size_t kWindow = 2048;
  constexpr int kPerMessage = 256;
  constexpr auto kBusyPause = std::chrono::milliseconds(50);
  for (v1::SubmitRequest& request : requests) {
    if (request.submission_token().empty()) {
      request.set_submission_token(RandomToken());
    }
  }
  std::deque<size_t> unsent;
  for (size_t i = 0; i < requests.size(); ++i) unsent.push_back(i);
  size_t answered = 0;
  // The stream's own call carries a credential too (of an empty message);
  // each message then vouches for its submissions.
  const v1::SubmitStreamRequest call_request;
  return InvokeCall(
      call_request,
      [&](Stub& stub, grpc::ClientContext& context) {
        if (answered == requests.size()) return grpc::Status::OK;
        std::unique_ptr<grpc::ClientReaderWriter<v1::SubmitStreamRequest,
                                                 v1::SubmitStreamReply>>
            stream = stub.SubmitStream(&context);
        Mutex mutex;
        CondVar wake;
        std::map<uint64_t, size_t> in_flight;  // stream sequence -> index
        uint64_t next_sequence = 0;
        bool ended = false;  // the stream closed: stop writing
        auto resend_after = std::chrono::steady_clock::now();
        absl::Status signing;
        std::thread writer([&] {
          while (true) {
            v1::SubmitStreamRequest message;
            {
              MutexLock lock(mutex);
              wake.Wait(lock, [&] {
                return ended || answered == requests.size() ||
                       (!unsent.empty() && in_flight.size() < kWindow);
              });
              if (ended || answered == requests.size()) break;
              if (std::chrono::steady_clock::now() < resend_after) {
                wake.WaitUntil(lock, resend_after);
                continue;
              }
              while (!unsent.empty() && in_flight.size() < kWindow &&
                     message.submissions_size() < kPerMessage) {
                in_flight.emplace(next_sequence++, unsent.front());
                *message.add_submissions() = requests[unsent.front()];
                unsent.pop_front();
              }
            }
            absl::StatusOr<std::string> credential = EncodeRequestCredential(
                munge_socket_, kMethodFor<v1::SubmitStreamRequest>, message);
            if (credential.ok()) {
              message.set_credential(*std::move(credential));
            } else if (signing.ok()) {
              // Sent without one: gantryd with MUNGE off still takes it.
              signing = credential.status();
            }
            if (!stream->Write(message)) break;
          }
          stream->WritesDone();
        });
        v1::SubmitStreamReply reply;
        while (stream->Read(&reply)) {
          MutexLock lock(mutex);
          for (const v1::SubmitAck& ack : reply.acks()) {
            auto sent = in_flight.find(ack.sequence());
            if (sent == in_flight.end()) continue;
            const size_t index = sent->second;
            in_flight.erase(sent);
            const auto code = static_cast<grpc::StatusCode>(ack.code());
            if (code == grpc::StatusCode::RESOURCE_EXHAUSTED) {
              unsent.push_front(index);
              resend_after = std::chrono::steady_clock::now() + kBusyPause;
              continue;
            }
            ++answered;
            if (code == grpc::StatusCode::OK) {
              done(index, ack.job_id());
            } else {
              done(index, absl::Status(static_cast<absl::StatusCode>(code),
                                       EscapeForTerminal(ack.error())));
            }
          }
          wake.NotifyAll();
        }
        {
          MutexLock lock(mutex);
          ended = true;
          // Not answered on this stream: sent again on the next.
          for (auto it = in_flight.rbegin(); it != in_flight.rend(); ++it) {
            unsent.push_front(it->second);
          }
          in_flight.clear();
        }
        wake.NotifyAll();
        writer.join();
        grpc::Status status = stream->Finish();
        if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED &&
            !signing.ok()) {
          credential_error_ = std::string(signing.message());
        }
        return status;
      },
      nullptr, std::chrono::hours(1));
}

absl::Status ControllerClient::ListJobs(const v1::ListJobsRequest& request,
                                        v1::ListJobsResponse& response) {
  return Invoke(&Stub::ListJobs, request, response);
}

absl::Status ControllerClient::ListAllJobs(v1::ListJobsRequest request,
                                           JobListing& jobs) {
  request.clear_page_token();
  absl::Status streamed = StreamAllJobs(request, jobs);
  if (!absl::IsUnimplemented(streamed)) return streamed;
  // A gantryd from before StreamJobs (a rolling upgrade): page by page.
  return AllPages<v1::ListJobsResponse>(
      std::move(request), jobs,
      [this](const v1::ListJobsRequest& r, v1::ListJobsResponse& page) {
        return ListJobs(r, page);
      });
}

absl::Status ControllerClient::StreamAllJobs(const v1::ListJobsRequest& request,
                                             JobListing& jobs) {
  v1::StreamJobsRequest stream_request;
  *stream_request.mutable_listing() = request;
  // A stream cut by a failover resumes after the last page it delivered.
  // The deadline is the whole listing's: generous, since a page comes
  // every few milliseconds.
  return InvokeCall(
      stream_request,
      [&](Stub& stub, grpc::ClientContext& context) {
        std::unique_ptr<grpc::ClientReader<v1::ListJobsResponse>> reader =
            stub.StreamJobs(&context, stream_request);
        while (true) {
          auto* page =
              google::protobuf::Arena::CreateMessage<v1::ListJobsResponse>(
                  &jobs.arena());
          if (!reader->Read(page)) break;
          jobs.TakeAll(*page->mutable_jobs());
          stream_request.mutable_listing()->set_page_token(
              page->next_page_token());
        }
        return reader->Finish();
      },
      nullptr, std::chrono::minutes(5));
}

absl::Status ControllerClient::GetJob(uint64_t job_id,
                                      v1::GetJobResponse& response) {
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  return GetJob(request, response);
}

absl::Status ControllerClient::GetJob(const v1::GetJobRequest& request,
                                      v1::GetJobResponse& response) {
  return Invoke(&Stub::GetJob, request, response);
}

absl::Status ControllerClient::Accounting(v1::AccountingRequest request,
                                          JobListing& jobs,
                                          std::string* cluster_name) {
  return AllPages<v1::AccountingResponse>(
      std::move(request), jobs,
      [this, cluster_name](const v1::AccountingRequest& r,
                           v1::AccountingResponse& page) {
        absl::Status status = Invoke(&Stub::Accounting, r, page);
        if (status.ok() && cluster_name != nullptr) {
          *cluster_name = page.cluster_name();
        }
        return status;
      });
}

absl::Status ControllerClient::ForEachAccountingPage(
    v1::AccountingRequest request,
    const std::function<absl::Status(const v1::AccountingResponse&)>& on_page) {
  // One page reused: each is dropped once `on_page` has seen it.
  v1::AccountingResponse page;
  return EachPage(
      std::move(request),
      [&]() -> v1::AccountingResponse& {
        page.Clear();
        return page;
      },
      [this](const v1::AccountingRequest& r, v1::AccountingResponse& p) {
        return Invoke(&Stub::Accounting, r, p);
      },
      on_page);
}

absl::Status ControllerClient::SchedulerReport(
    v1::SchedulerReportResponse& response) {
  v1::SchedulerReportRequest request;
  return Invoke(&Stub::SchedulerReport, request, response);
}

absl::Status ControllerClient::Handover(const v1::HandoverRequest& request,
                                        v1::HandoverResponse& response) {
  return Invoke(&Stub::Handover, request, response);
}

absl::Status ControllerClient::Cancel(const v1::CancelRequest& request,
                                      v1::CancelResponse& response) {
  return Invoke(&Stub::Cancel, request, response);
}

absl::Status ControllerClient::Hold(const v1::HoldRequest& request,
                                    v1::HoldResponse& response) {
  return Invoke(&Stub::Hold, request, response);
}

absl::Status ControllerClient::Requeue(const v1::RequeueRequest& request,
                                       v1::RequeueResponse& response) {
  return Invoke(&Stub::Requeue, request, response);
}

absl::Status ControllerClient::UpdateJob(const v1::UpdateJobRequest& request,
                                         v1::UpdateJobResponse& response) {
  return Invoke(&Stub::UpdateJob, request, response);
}

absl::Status ControllerClient::ListNodes(v1::ListNodesResponse& response) {
  const v1::ListNodesRequest request;
  return Invoke(&Stub::ListNodes, request, response);
}

absl::Status ControllerClient::ClusterStatus(
    v1::ClusterStatusResponse& response) {
  const v1::ClusterStatusRequest request;
  return Invoke(&Stub::ClusterStatus, request, response);
}

absl::Status ControllerClient::ReportProgress(
    const v1::ReportProgressRequest& request,
    v1::ReportProgressResponse& response) {
  if (absl::Status size = CheckRequestSize(request, "the progress report");
      !size.ok()) {
    return size;
  }
  return Invoke(&Stub::ReportProgress, request, response);
}

absl::Status ControllerClient::Drain(const v1::DrainRequest& request,
                                     v1::DrainResponse& response) {
  if (absl::Status size = CheckRequestSize(request, "the drain request");
      !size.ok()) {
    return size;
  }
  return Invoke(&Stub::Drain, request, response);
}

absl::Status ControllerClient::ImportTopology(
    const v1::ImportTopologyRequest& request, v1::TopologyReport& response) {
  if (absl::Status size = CheckRequestSize(request, "the topology file");
      !size.ok()) {
    return size;
  }
  return Invoke(&Stub::ImportTopology, request, response);
}

absl::Status ControllerClient::GetTopology(v1::TopologyReport& response) {
  const v1::GetTopologyRequest request;
  return Invoke(&Stub::GetTopology, request, response);
}

absl::Status ControllerClient::LaunchStep(const v1::LaunchStepRequest& request,
                                          v1::LaunchStepResponse& response) {
  if (absl::Status size = CheckRequestSize(request, "the step request");
      !size.ok()) {
    return size;
  }
  return Invoke(&Stub::LaunchStep, request, response);
}

absl::Status ControllerClient::EndAllocation(
    const v1::EndAllocationRequest& request,
    v1::EndAllocationResponse& response) {
  return Invoke(&Stub::EndAllocation, request, response);
}

absl::Status ControllerClient::KeepAllocation(
    const v1::KeepAllocationRequest& request,
    v1::KeepAllocationResponse& response, std::chrono::milliseconds wait) {
  return Invoke(&Stub::KeepAllocation, request, response, nullptr, wait);
}

absl::Status ControllerClient::WaitStep(const v1::WaitStepRequest& request,
                                        v1::WaitStepResponse& response,
                                        std::chrono::seconds wait) {
  grpc::Status raw;
  absl::Status status = Invoke(&Stub::WaitStep, request, response, &raw, wait);
  if (raw.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::DeadlineExceededError("the step is still running");
  }
  return status;
}

namespace {

// The controller answers a waiting cache request when its wait is over:
// the call gets that long plus the ordinary margin.
std::chrono::milliseconds CacheCallTimeout(uint32_t wait_seconds) {
  return std::chrono::seconds(30) + std::chrono::seconds(wait_seconds);
}

}  // namespace

absl::Status ControllerClient::ListDatasetCache(
    const v1::ListDatasetCacheRequest& request,
    v1::ListDatasetCacheResponse& response) {
  if (absl::Status size = CheckRequestSize(request, "the cache listing");
      !size.ok()) {
    return size;
  }
  return Invoke(&Stub::ListDatasetCache, request, response);
}

absl::Status ControllerClient::PrefetchDataset(
    const v1::PrefetchDatasetRequest& request,
    v1::DatasetCacheActionResponse& response) {
  if (absl::Status size = CheckRequestSize(request, "the prefetch request");
      !size.ok()) {
    return size;
  }
  return Invoke(&Stub::PrefetchDataset, request, response, nullptr,
                CacheCallTimeout(request.wait_seconds()));
}

absl::Status ControllerClient::EvictDataset(
    const v1::EvictDatasetRequest& request,
    v1::DatasetCacheActionResponse& response) {
  if (absl::Status size = CheckRequestSize(request, "the eviction request");
      !size.ok()) {
    return size;
  }
  return Invoke(&Stub::EvictDataset, request, response, nullptr,
                CacheCallTimeout(request.wait_seconds()));
}

}  // namespace gantry::cli
