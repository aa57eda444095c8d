// gRPC front ends of the controller: the client API and the agent stream.
//
// Both use gRPC's callback API and never block a gRPC thread: a request is
// turned into a closure posted to the controller's loop, and the reactor is
// finished from there. Every unary call runs through one relay
// (unary_relay.h), the submit stream through its reactor (submit_stream.h).
// Status codes are mapped to gRPC in one place (grpc_status.h). Every call
// is authenticated (daemon/rpc/authenticator.h, call_authentication.h) on
// the gRPC thread before it reaches the loop.
#pragma once

#include <functional>

#include <grpcpp/support/message_allocator.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "daemon/controller/controller.h"
#include "daemon/rpc/admission_gate.h"
#include "daemon/rpc/agent_inbox.h"
#include "daemon/rpc/agent_stream_guard.h"
#include "daemon/rpc/authenticator.h"
#include "daemon/rpc/unary_relay.h"
#include "gantry/v1/agent.grpc.pb.h"
#include "gantry/v1/client.grpc.pb.h"

namespace gantry {

// Makes the Submit calls' request and response objects, so that gantryd
// owns the request and the controller may move its spec (with the exported
// environment, often thousands of bytes) instead of copying it.
class SubmitMessageAllocator final
    : public grpc::MessageAllocator<v1::SubmitRequest, v1::SubmitResponse> {
 public:
  grpc::MessageHolder<v1::SubmitRequest, v1::SubmitResponse>* AllocateMessages()
      override;
};

class ClientServiceImpl final : public v1::ClientService::CallbackService {
 public:
  // `max_pending_submissions`: submissions admitted but not yet answered
  // (see admission_gate.h); more are refused as busy.
  ClientServiceImpl(boost::asio::io_context& io, Controller& controller,
                    const Authenticator& authenticator,
                    uint32_t max_pending_submissions = 20000)
      : io_(io),
        controller_(controller),
        authenticator_(authenticator),
        relay_(io, authenticator),
        submissions_(max_pending_submissions) {
    SetMessageAllocatorFor_Submit(&submit_messages_);
  }

  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* context,
                                   const v1::SubmitRequest* request,
                                   v1::SubmitResponse* response) override;
  grpc::ServerBidiReactor<v1::SubmitStreamRequest, v1::SubmitStreamReply>*
  SubmitStream(grpc::CallbackServerContext* context) override;
  // Called with each SubmitStream's status as it is sent, for the RPC
  // metrics, which do not intercept streams (rpc_metrics_interceptor.h).
  // Set before the server starts.
  void OnSubmitStreamFinished(std::function<void(grpc::StatusCode)> counter) {
    submit_stream_finished_ = std::move(counter);
  }
  // A replicated controller's peers and etcd, added to ClusterStatus
  // (called on a gRPC thread; it may block on etcd briefly). Set before
  // the server starts.
  void SetReplicationStatus(std::function<v1::ReplicationStatus()> source) {
    replication_status_ = std::move(source);
  }
  // Hands a replicated controller's leadership to a standby
  // (daemon/replication/handover.h); unset: Handover is refused, there is
  // no standby. `answer` is called once, from any thread, and returns once
  // the answer has gone out (or after a short wait). Set before the
  // server starts.
  using HandoverAnswer =
      std::function<void(absl::StatusOr<v1::HandoverResponse>)>;
  void SetHandover(
      std::function<void(const v1::HandoverRequest&, HandoverAnswer)> start) {
    handover_ = std::move(start);
  }
  grpc::ServerUnaryReactor* Handover(grpc::CallbackServerContext* context,
                                     const v1::HandoverRequest* request,
                                     v1::HandoverResponse* response) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* context,
                                     const v1::ListJobsRequest* request,
                                     v1::ListJobsResponse* response) override;
  grpc::ServerWriteReactor<v1::ListJobsResponse>* StreamJobs(
      grpc::CallbackServerContext* context,
      const v1::StreamJobsRequest* request) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context,
                                   const v1::GetJobRequest* request,
                                   v1::GetJobResponse* response) override;
  grpc::ServerUnaryReactor* Cancel(grpc::CallbackServerContext* context,
                                   const v1::CancelRequest* request,
                                   v1::CancelResponse* response) override;
  grpc::ServerUnaryReactor* Hold(grpc::CallbackServerContext* context,
                                 const v1::HoldRequest* request,
                                 v1::HoldResponse* response) override;
  grpc::ServerUnaryReactor* ListNodes(grpc::CallbackServerContext* context,
                                      const v1::ListNodesRequest* request,
                                      v1::ListNodesResponse* response) override;
  grpc::ServerUnaryReactor* Accounting(
      grpc::CallbackServerContext* context,
      const v1::AccountingRequest* request,
      v1::AccountingResponse* response) override;
  grpc::ServerUnaryReactor* SchedulerReport(
      grpc::CallbackServerContext* context,
      const v1::SchedulerReportRequest* request,
      v1::SchedulerReportResponse* response) override;
  grpc::ServerUnaryReactor* ClusterStatus(
      grpc::CallbackServerContext* context,
      const v1::ClusterStatusRequest* request,
      v1::ClusterStatusResponse* response) override;
  grpc::ServerUnaryReactor* LaunchStep(
      grpc::CallbackServerContext* context,
      const v1::LaunchStepRequest* request,
      v1::LaunchStepResponse* response) override;
  grpc::ServerUnaryReactor* WaitStep(grpc::CallbackServerContext* context,
                                     const v1::WaitStepRequest* request,
                                     v1::WaitStepResponse* response) override;
  grpc::ServerUnaryReactor* EndAllocation(
      grpc::CallbackServerContext* context,
      const v1::EndAllocationRequest* request,
      v1::EndAllocationResponse* response) override;
  grpc::ServerUnaryReactor* KeepAllocation(
      grpc::CallbackServerContext* context,
      const v1::KeepAllocationRequest* request,
      v1::KeepAllocationResponse* response) override;
  grpc::ServerUnaryReactor* ReportProgress(
      grpc::CallbackServerContext* context,
      const v1::ReportProgressRequest* request,
      v1::ReportProgressResponse* response) override;
  grpc::ServerUnaryReactor* ImportTopology(
      grpc::CallbackServerContext* context,
      const v1::ImportTopologyRequest* request,
      v1::TopologyReport* response) override;
  grpc::ServerUnaryReactor* GetTopology(grpc::CallbackServerContext* context,
                                        const v1::GetTopologyRequest* request,
                                        v1::TopologyReport* response) override;
  grpc::ServerUnaryReactor* Drain(grpc::CallbackServerContext* context,
                                  const v1::DrainRequest* request,
                                  v1::DrainResponse* response) override;
  grpc::ServerUnaryReactor* Requeue(grpc::CallbackServerContext* context,
                                    const v1::RequeueRequest* request,
                                    v1::RequeueResponse* response) override;
  grpc::ServerUnaryReactor* UpdateJob(grpc::CallbackServerContext* context,
                                      const v1::UpdateJobRequest* request,
                                      v1::UpdateJobResponse* response) override;
  // `gantry cache`: list, prefetch, evict.
  grpc::ServerUnaryReactor* ListDatasetCache(
      grpc::CallbackServerContext* context,
      const v1::ListDatasetCacheRequest* request,
      v1::ListDatasetCacheResponse* response) override;
  grpc::ServerUnaryReactor* PrefetchDataset(
      grpc::CallbackServerContext* context,
      const v1::PrefetchDatasetRequest* request,
      v1::DatasetCacheActionResponse* response) override;
  grpc::ServerUnaryReactor* EvictDataset(
      grpc::CallbackServerContext* context,
      const v1::EvictDatasetRequest* request,
      v1::DatasetCacheActionResponse* response) override;

 private:
  // What Cancel and Hold do to the jobs a request selects.
  template <class Request, class Response>
  using SelectionAction = void (Controller::*)(const Request&, const Caller&,
                                               std::function<void(Response)>);

  // Cancel and Hold: `act` on the jobs `request` selects, once the
  // selection is checked.
  template <class Request, class Response>
  grpc::ServerUnaryReactor* RelaySelection(
      grpc::CallbackServerContext* context, const Request* request,
      Response* response, SelectionAction<Request, Response> act);

  boost::asio::io_context& io_;
  Controller& controller_;
  const Authenticator& authenticator_;
  const UnaryRelay relay_;
  AdmissionGate submissions_;
  SubmitMessageAllocator submit_messages_;
  std::function<void(grpc::StatusCode)> submit_stream_finished_;
  std::function<v1::ReplicationStatus()> replication_status_;
  std::function<void(const v1::HandoverRequest&, HandoverAnswer)> handover_;
};

class AgentServiceImpl final
    : public v1::AgentService::WithRawCallbackMethod_Connect<
          v1::AgentService::Service> {
 public:
  // `limits`: what each agent stream may send before it is cut
  // (agent_stream_guard.h).
  AgentServiceImpl(boost::asio::io_context& io, Controller& controller,
                   const Authenticator& authenticator,
                   const AgentStreamLimits& limits = {})
      : io_(io),
        controller_(controller),
        authenticator_(authenticator),
        limits_(limits),
        heartbeat_timer_(io) {}

  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Connect(
      grpc::CallbackServerContext* context) override;

  // Called with each stream's status as it is sent (for the RPC metrics,
  // which do not intercept the streams: see rpc_metrics_interceptor.h).
  // Set before the server starts.
  void OnStreamFinished(std::function<void(grpc::StatusCode)> counter) {
    stream_finished_ = std::move(counter);
  }
  void StreamFinished(grpc::StatusCode code) const {
    if (stream_finished_) stream_finished_(code);
  }

  // From the streams' reactors (any gRPC thread): hands what a stream read,
  // or its end, to the controller's loop through the inbox (agent_inbox.h).
  void Deliver(AgentInbox::Item item);

 private:
  // On the loop: hands everything in the inbox to the controller.
  void HandOverInbox();

  boost::asio::io_context& io_;
  Controller& controller_;
  const Authenticator& authenticator_;
  const AgentStreamLimits limits_;
  AgentInbox inbox_;
  boost::asio::steady_timer heartbeat_timer_;  // used on the loop only
  std::function<void(grpc::StatusCode)> stream_finished_;
};

}  // namespace gantry
