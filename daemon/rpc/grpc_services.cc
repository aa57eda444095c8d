#include "daemon/rpc/grpc_services.h"

#include <deque>
#include <functional>
#include <future>
#include <memory>

#include <boost/asio/post.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/mutex.h"
#include "daemon/controller/core/job_filter.h"
#include "daemon/controller/core/request_validation.h"
#include "daemon/controller/features/datasets/datasets_feature.h"
#include "daemon/rpc/call_authentication.h"
#include "daemon/rpc/grpc_status.h"
#include "daemon/rpc/job_list_stream.h"
#include "daemon/rpc/leadership_fence.h"
#include "daemon/rpc/submit_stream.h"

namespace gantry {

namespace {

// `gantry cache` when gantryd was built without the datasets feature
// (ControllerOptions::features).
absl::Status WithoutDatasets() {
  return absl::UnimplementedError(
      "this gantryd runs without the datasets feature: no dataset caches");
}

class SubmitMessages final
    : public grpc::MessageHolder<v1::SubmitRequest, v1::SubmitResponse> {
 public:
  SubmitMessages() {
    set_request(&request_);
    set_response(&response_);
  }
  void Release() override { delete this; }

 private:
  v1::SubmitRequest request_;
  v1::SubmitResponse response_;
};

}  // namespace

grpc::MessageHolder<v1::SubmitRequest, v1::SubmitResponse>*
SubmitMessageAllocator::AllocateMessages() {
  return new SubmitMessages();
}

grpc::ServerUnaryReactor* ClientServiceImpl::Submit(
    grpc::CallbackServerContext* context, const v1::SubmitRequest* request,
    v1::SubmitResponse* response) {
  // A bounded queue: past it the client retries (the CLI does, with
  // backoff).
  auto enter_gate = [this](const v1::SubmitRequest&) {
    return submissions_.TryEnter() ? absl::OkStatus() : submissions_.Busy();
  };
  // SubmitMessageAllocator made the request, not const: it is this call's
  // to hand over, and gRPC does not read it again.
  auto* owned_request = const_cast<v1::SubmitRequest*>(request);
  return relay_.Relay(
      context, *request, {.user = request->user(), .uid = request->uid()},
      enter_gate,
      [this, owned_request, response](const Caller& caller,
                                      UnaryFinish finish) {
        controller_.Submit(std::move(*owned_request), caller,
                           [this, response, finish](absl::StatusOr<JobId> id) {
                             submissions_.Leave();
                             if (id.ok()) response->set_job_id(id->value());
                             finish(id.status());
                           });
      });
}

grpc::ServerBidiReactor<v1::SubmitStreamRequest, v1::SubmitStreamReply>*
ClientServiceImpl::SubmitStream(grpc::CallbackServerContext* context) {
  return new SubmitStreamReactor(context, io_, controller_, authenticator_,
                                 submissions_, submit_stream_finished_);
}

grpc::ServerUnaryReactor* ClientServiceImpl::ListJobs(
    grpc::CallbackServerContext* context, const v1::ListJobsRequest* request,
    v1::ListJobsResponse* response) {
  return relay_.Relay(
      context, *request, kClaimsNobody,
      [this, request, response](const Caller& caller, UnaryFinish finish) {
        finish.Answer(response, controller_.ListJobs(*request, caller));
      });
}

grpc::ServerWriteReactor<v1::ListJobsResponse>* ClientServiceImpl::StreamJobs(
    grpc::CallbackServerContext* context,
    const v1::StreamJobsRequest* request) {
  return new JobListStream(context, *request, io_, controller_, authenticator_);
}

grpc::ServerUnaryReactor* ClientServiceImpl::GetJob(
    grpc::CallbackServerContext* context, const v1::GetJobRequest* request,
    v1::GetJobResponse* response) {
  return relay_.Relay(
      context, *request, kClaimsNobody,
      [this, request, response](const Caller& caller, UnaryFinish finish) {
        finish.Answer(response, controller_.GetJob(*request, caller));
      });
}

template <class Request, class Response>
grpc::ServerUnaryReactor* ClientServiceImpl::RelaySelection(
    grpc::CallbackServerContext* context, const Request* request,
    Response* response, SelectionAction<Request, Response> act) {
  // An outsized selection is refused whole (the controller tries every
  // entry against every job).
  return relay_.Relay(
      context, *request, {.user = request->user()},
      [](const Request& r) { return CheckFilter(r.filter()); },
      [this, request, response, act](const Caller& caller, UnaryFinish finish) {
        // The answer made first, then the member called through std::invoke:
        // the sanitizer build (-Og, ASan) reported a stack-buffer-underflow
        // in every Cancel when the call was `(controller_.*act)(...,
        // finish.AnswerInto(response))`; as written here, none.
        std::function<void(Response)> answer = finish.AnswerInto(response);
        std::invoke(act, controller_, *request, caller, std::move(answer));
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::Cancel(
    grpc::CallbackServerContext* context, const v1::CancelRequest* request,
    v1::CancelResponse* response) {
  return RelaySelection(context, request, response, &Controller::Cancel);
}

grpc::ServerUnaryReactor* ClientServiceImpl::Hold(
    grpc::CallbackServerContext* context, const v1::HoldRequest* request,
    v1::HoldResponse* response) {
  return RelaySelection(context, request, response, &Controller::Hold);
}

grpc::ServerUnaryReactor* ClientServiceImpl::Requeue(
    grpc::CallbackServerContext* context, const v1::RequeueRequest* request,
    v1::RequeueResponse* response) {
  return RelaySelection(context, request, response, &Controller::Requeue);
}

grpc::ServerUnaryReactor* ClientServiceImpl::UpdateJob(
    grpc::CallbackServerContext* context, const v1::UpdateJobRequest* request,
    v1::UpdateJobResponse* response) {
  return RelaySelection(context, request, response, &Controller::UpdateJob);
}

grpc::ServerUnaryReactor* ClientServiceImpl::ListNodes(
    grpc::CallbackServerContext* context, const v1::ListNodesRequest* request,
    v1::ListNodesResponse* response) {
  return relay_.Relay(context, *request, kClaimsNobody,
                      [this, response](const Caller&, UnaryFinish finish) {
                        finish.Answer(response, controller_.ListNodes());
                      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::ClusterStatus(
    grpc::CallbackServerContext* context,
    const v1::ClusterStatusRequest* request,
    v1::ClusterStatusResponse* response) {
  // Asked of etcd here, on gRPC's thread: never on the controller's loop.
  v1::ReplicationStatus replication;
  if (replication_status_) replication = replication_status_();
  return relay_.Relay(context, *request, kClaimsNobody,
                      [this, response, replication = std::move(replication)](
                          const Caller&, UnaryFinish finish) {
                        v1::ClusterStatusResponse status =
                            controller_.ClusterStatus();
                        if (replication.enabled())
                          *status.mutable_replication() = replication;
                        finish.Answer(response, std::move(status));
                      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::Accounting(
    grpc::CallbackServerContext* context, const v1::AccountingRequest* request,
    v1::AccountingResponse* response) {
  // An outsized selection is refused before it reaches the loop.
  return relay_.Relay(
      context, *request, {.user = request->user()},
      [](const v1::AccountingRequest& r) { return CheckFilter(r.filter()); },
      [this, request, response](const Caller& caller, UnaryFinish finish) {
        // Answered from the controller's history thread.
        controller_.Accounting(*request, caller, finish.AnswerInto(response));
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::SchedulerReport(
    grpc::CallbackServerContext* context,
    const v1::SchedulerReportRequest* request,
    v1::SchedulerReportResponse* response) {
  return relay_.Relay(context, *request, kClaimsNobody,
                      [this, response](const Caller&, UnaryFinish finish) {
                        finish.Answer(response, controller_.SchedulerReport());
                      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::ReportProgress(
    grpc::CallbackServerContext* context,
    const v1::ReportProgressRequest* request, v1::ReportProgressResponse*) {
  return relay_.Relay(
      context, *request, {.user = request->user()},
      ValidateReportProgressRequest,
      [this, request](const Caller& caller, UnaryFinish finish) {
        controller_.ReportProgress(*request, caller, finish);
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::LaunchStep(
    grpc::CallbackServerContext* context, const v1::LaunchStepRequest* request,
    v1::LaunchStepResponse* response) {
  return relay_.Relay(
      context, *request, {.user = request->user()},
      ValidateLaunchStepRequestFields,
      [this, request, response](const Caller& caller, UnaryFinish finish) {
        controller_.LaunchStep(*request, caller, finish.AnswerInto(response));
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::WaitStep(
    grpc::CallbackServerContext* context, const v1::WaitStepRequest* request,
    v1::WaitStepResponse* response) {
  return relay_.Relay(
      context, *request, {.user = request->user()},
      [this, request, response](const Caller& caller, UnaryFinish finish) {
        controller_.WaitStep(*request, caller,
                             finish.AnswerInto(response->mutable_step()));
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::EndAllocation(
    grpc::CallbackServerContext* context,
    const v1::EndAllocationRequest* request, v1::EndAllocationResponse*) {
  return relay_.Relay(
      context, *request, {.user = request->user()},
      [this, request](const Caller& caller, UnaryFinish finish) {
        controller_.EndAllocation(*request, caller, finish);
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::KeepAllocation(
    grpc::CallbackServerContext* context,
    const v1::KeepAllocationRequest* request,
    v1::KeepAllocationResponse* response) {
  return relay_.Relay(
      context, *request, {.user = request->user()},
      [this, request, response](const Caller& caller, UnaryFinish finish) {
        finish.Answer(response, controller_.KeepAllocation(*request, caller));
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::Drain(
    grpc::CallbackServerContext* context, const v1::DrainRequest* request,
    v1::DrainResponse*) {
  return relay_.Relay(
      context, *request, {.user = request->user()}, ValidateDrainRequest,
      [this, request](const Caller& caller, UnaryFinish finish) {
        controller_.Drain(*request, caller, finish);
      });
}

namespace {

// A Handover call's reactor: the answer must be out before gantryd
// re-executes as a standby, so it says when it is.
class HandoverReactor final : public grpc::ServerUnaryReactor {
 public:
  // Finishes the call and waits until gRPC is done with it, for at most
  // 200 ms (a client that does not read its answer holds nothing up).
  void Answer(v1::HandoverResponse* response,
              absl::StatusOr<v1::HandoverResponse> result) {
    std::future<void> done = done_.get_future();
    if (result.ok()) *response = std::move(*result);
    Finish(ToGrpcStatus(result.status()));
    done.wait_for(std::chrono::milliseconds(200));
  }
  void OnDone() override {
    done_.set_value();
    delete this;
  }

 private:
  std::promise<void> done_;
};

}  // namespace

grpc::ServerUnaryReactor* ClientServiceImpl::Handover(
    grpc::CallbackServerContext* context, const v1::HandoverRequest* request,
    v1::HandoverResponse* response) {
  // Not the controller's business (its loop is not involved): this
  // controller's place among its peers.
  auto* reactor = new HandoverReactor();
  absl::StatusOr<Caller> caller = AuthenticateClientCall(
      authenticator_, *context, kMethodFor<v1::HandoverRequest>, *request,
      request->user());
  absl::Status refused = caller.status();
  if (refused.ok() && !caller->admin) {
    refused = absl::PermissionDeniedError(absl::StrCat(
        "handing leadership over needs an admin (root or the admin group); "
        "you are ",
        caller->user));
  } else if (refused.ok() && !handover_) {
    refused = absl::FailedPreconditionError(
        "this gantryd runs alone (no --etcd): there is no standby to hand "
        "leadership to");
  }
  if (!refused.ok()) {
    reactor->Finish(ToGrpcStatus(refused));
    return reactor;
  }
  log::Warn("hand-over requested",
            {{"user", caller->user}, {"successor", request->successor()}});
  handover_(*request,
            [reactor, response](absl::StatusOr<v1::HandoverResponse> result) {
              reactor->Answer(response, std::move(result));
            });
  return reactor;
}

grpc::ServerUnaryReactor* ClientServiceImpl::ImportTopology(
    grpc::CallbackServerContext* context,
    const v1::ImportTopologyRequest* request, v1::TopologyReport* response) {
  return relay_.Relay(
      context, *request, {.user = request->user()},
      ValidateImportTopologyRequest,
      [this, request, response](const Caller& caller, UnaryFinish finish) {
        controller_.ImportTopology(*request, caller,
                                   finish.AnswerInto(response));
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::GetTopology(
    grpc::CallbackServerContext* context, const v1::GetTopologyRequest* request,
    v1::TopologyReport* response) {
  return relay_.Relay(context, *request, kClaimsNobody,
                      [this, response](const Caller&, UnaryFinish finish) {
                        finish.Answer(response, controller_.TopologyReport());
                      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::ListDatasetCache(
    grpc::CallbackServerContext* context,
    const v1::ListDatasetCacheRequest* request,
    v1::ListDatasetCacheResponse* response) {
  return relay_.Relay(
      context, *request, {.user = request->user()},
      ValidateListDatasetCacheRequest,
      [this, request, response](const Caller& caller, UnaryFinish finish) {
        DatasetsFeature* datasets = controller_.FindFeature<DatasetsFeature>();
        if (datasets == nullptr) {
          finish(WithoutDatasets());
          return;
        }
        finish.Answer(response, datasets->ListDatasetCache(*request, caller));
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::PrefetchDataset(
    grpc::CallbackServerContext* context,
    const v1::PrefetchDatasetRequest* request,
    v1::DatasetCacheActionResponse* response) {
  return relay_.Relay(
      context, *request, {.user = request->user()},
      ValidatePrefetchDatasetRequest,
      [this, request, response](const Caller& caller, UnaryFinish finish) {
        DatasetsFeature* datasets = controller_.FindFeature<DatasetsFeature>();
        if (datasets == nullptr) {
          finish(WithoutDatasets());
          return;
        }
        datasets->PrefetchDataset(*request, caller,
                                  finish.AnswerInto(response));
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::EvictDataset(
    grpc::CallbackServerContext* context,
    const v1::EvictDatasetRequest* request,
    v1::DatasetCacheActionResponse* response) {
  return relay_.Relay(
      context, *request, {.user = request->user()}, ValidateEvictDatasetRequest,
      [this, request, response](const Caller& caller, UnaryFinish finish) {
        DatasetsFeature* datasets = controller_.FindFeature<DatasetsFeature>();
        if (datasets == nullptr) {
          finish(WithoutDatasets());
          return;
        }
        datasets->EvictDataset(*request, caller, finish.AnswerInto(response));
      });
}

namespace {

// How long heartbeats may gather in the inbox before the loop takes them:
// milliseconds, against a node timeout of seconds.
constexpr auto kHeartbeatGathering = std::chrono::milliseconds(10);

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class AgentStream;

// The controller's handle on a stream. It outlives the reactor (the
// controller may still hold it after the stream ended), so it reaches the
// reactor through a pointer cleared, under the mutex, when the reactor is
// done.
class AgentStreamLink final : public AgentLink {
 public:
  explicit AgentStreamLink(std::string peer) : peer_(std::move(peer)) {}
  void Send(const v1::ControllerMessage& message) override;
  void Close() override;
  void Close(const absl::Status& why) override;
  std::string Peer() const override { return peer_; }

  void Attach(AgentStream* stream) {
    MutexLock lock(mutex_);
    stream_ = stream;
  }
  void Detach() {
    MutexLock lock(mutex_);
    stream_ = nullptr;
  }

 private:
  const std::string peer_;
  Mutex mutex_;
  AgentStream* stream_ ABSL_GUARDED_BY(mutex_) = nullptr;
};

// The stream carries raw bytes: the reactor checks a message's size and
// its stream's rate before parsing it, and tells bytes that are not an
// AgentMessage from the end of the stream (gRPC's own parsing reports both
// as a failed read).
class AgentStream final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  AgentStream(AgentServiceImpl& service, std::string peer,
              const AgentStreamLimits& limits)
      : service_(service),
        link_(std::make_shared<AgentStreamLink>(std::move(peer))),
        guard_(limits, SteadyNowMs()) {
    link_->Attach(this);
    StartRead(&incoming_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      FinishOnce(grpc::Status::OK);
      return;
    }
    AgentInbox::Item item{
        .link = link_, .message = {}, .stream_ended = false, .end_reason = {}};
    absl::Status admitted = guard_.Admit(incoming_.Length(), SteadyNowMs());
    if (admitted.ok() &&
        !grpc::SerializationTraits<v1::AgentMessage>::Deserialize(&incoming_,
                                                                  &item.message)
             .ok()) {
      admitted = absl::InvalidArgumentError(
          "a message that is not an AgentMessage (unparseable bytes)");
    }
    if (admitted.ok()) admitted = guard_.Check(item.message);
    if (!admitted.ok()) {
      Cut(admitted);
      return;
    }
    service_.Deliver(std::move(item));
    StartRead(&incoming_);
  }

  void OnWriteDone(bool ok) override {
    MutexLock lock(mutex_);
    outgoing_.pop_front();
    if (!ok) {
      outgoing_.clear();
      writing_ = false;
      FinishLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed"));
      return;
    }
    if (!outgoing_.empty()) {
      StartWrite(&outgoing_.front());
    } else {
      writing_ = false;
      if (finish_requested_) FinishLocked(finish_status_);
    }
  }

  void OnDone() override {
    link_->Detach();
    // Through the inbox too, so that it comes after the stream's last
    // messages.
    service_.Deliver({.link = link_,
                      .message = {},
                      .stream_ended = true,
                      .end_reason = std::move(cut_reason_)});
    delete this;
  }

  void Enqueue(const v1::ControllerMessage& message) {
    grpc::ByteBuffer bytes;
    bool own_buffer = false;
    if (!grpc::SerializationTraits<v1::ControllerMessage>::Serialize(
             message, &bytes, &own_buffer)
             .ok()) {
      return;
    }
    MutexLock lock(mutex_);
    if (finish_requested_) return;
    outgoing_.push_back(std::move(bytes));
    if (!writing_) {
      writing_ = true;
      StartWrite(&outgoing_.front());
    }
  }

  void FinishOnce(const grpc::Status& status) {
    MutexLock lock(mutex_);
    FinishLocked(status);
  }

 private:
  // Ends a misbehaving stream: no more reads; the controller hears of the
  // end (and why) after the messages that were admitted.
  void Cut(const absl::Status& why) {
    cut_reason_ = std::string(why.message());
    log::Warn("agent stream cut", {{"node", guard_.node_name()},
                                   {"peer", link_->Peer()},
                                   {"reason", cut_reason_}});
    FinishOnce(ToGrpcStatus(why));
  }

  // Finish must wait for an outstanding write; it is called again from
  // OnWriteDone when the queue drains.
  void FinishLocked(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (finished_) return;
    finish_requested_ = true;
    finish_status_ = status;
    if (writing_) return;
    finished_ = true;
    service_.StreamFinished(status.error_code());
    Finish(status);
  }

  AgentServiceImpl& service_;
  std::shared_ptr<AgentStreamLink> link_;
  // Reads only (gRPC runs one OnReadDone of a stream at a time).
  grpc::ByteBuffer incoming_;
  AgentStreamGuard guard_;
  std::string cut_reason_;
  Mutex mutex_;
  std::deque<grpc::ByteBuffer> outgoing_ ABSL_GUARDED_BY(mutex_);
  bool writing_ ABSL_GUARDED_BY(mutex_) = false;
  bool finish_requested_ ABSL_GUARDED_BY(mutex_) = false;
  bool finished_ ABSL_GUARDED_BY(mutex_) = false;
  grpc::Status finish_status_ ABSL_GUARDED_BY(mutex_);
};

void AgentStreamLink::Send(const v1::ControllerMessage& message) {
  MutexLock lock(mutex_);
  if (!stream_) return;
  if (!LeadershipHeld()) {
    // A controller that may have been replaced tells agents nothing. Nor
    // does it drop the message silently: its lease may only have lapsed
    // (etcd electing a raft leader) and it may lead on, with an agent that
    // missed, say, an acknowledgement or a kill. The stream ends instead,
    // and no later message goes out on it, so the agent redials (this
    // controller once confirmed, or the new leader) and registers again:
    // registration re-sends its unacknowledged exits and reconciles the
    // ranks it runs with those the leader believes run there.
    stream_->FinishOnce(grpc::Status(
        grpc::StatusCode::UNAVAILABLE,
        "this controller cannot confirm that it still leads (its etcd "
        "lease lapsed); register again"));
    return;
  }
  stream_->Enqueue(message);
}

void AgentStreamLink::Close(const absl::Status& why) {
  MutexLock lock(mutex_);
  if (stream_) stream_->FinishOnce(ToGrpcStatus(why));
}

void AgentStreamLink::Close() {
  MutexLock lock(mutex_);
  if (stream_)
    stream_->FinishOnce(
        grpc::Status(grpc::StatusCode::ABORTED, "closed by controller"));
}

// A stream refused before it began: finishes at once with the reason.
class RefusedAgentStream final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  RefusedAgentStream(const AgentServiceImpl& service,
                     const grpc::Status& status) {
    service.StreamFinished(status.error_code());
    Finish(status);
  }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
AgentServiceImpl::Connect(grpc::CallbackServerContext* context) {
  absl::Status admitted = authenticator_.AuthenticateAgent(*context);
  if (!admitted.ok()) {
    log::Warn("agent refused",
              {{"peer", context->peer()}, {"error", admitted.ToString()}});
    return new RefusedAgentStream(*this, ToGrpcStatus(admitted));
  }
  return new AgentStream(*this, context->peer(), limits_);
}

void AgentServiceImpl::Deliver(AgentInbox::Item item) {
  switch (inbox_.Push(std::move(item))) {
    case AgentInbox::Wake::kNone:
      break;
    case AgentInbox::Wake::kNow:
      boost::asio::post(io_, [this] { HandOverInbox(); });
      break;
    case AgentInbox::Wake::kLater:
      boost::asio::post(io_, [this] {
        // A wait this replaces is cancelled; this one hands over for both.
        heartbeat_timer_.expires_after(kHeartbeatGathering);
        heartbeat_timer_.async_wait(
            [this](const boost::system::error_code&) { HandOverInbox(); });
      });
      break;
  }
}

void AgentServiceImpl::HandOverInbox() {
  for (AgentInbox::Item& item : inbox_.Take()) {
    if (item.stream_ended) {
      controller_.OnAgentGone(item.link, item.end_reason);
    } else {
      controller_.OnAgentMessage(item.link, item.message);
    }
  }
}

}  // namespace gantry
