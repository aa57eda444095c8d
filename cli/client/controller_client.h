// How the CLI reaches gantryd: target resolution (--controller, then
// GANTRY_CONTROLLER, then /etc/gantry/gantry.toml's [client] table, then
// the local socket), TLS to a TCP target when
// $GANTRY_TLS_CA names a CA (common/tls_credentials.h; gantry --tls-ca sets
// it), and calls with deadlines and a MUNGE credential bound to each
// request (munged socket: $GANTRY_MUNGE_SOCKET or the default) whose
// failures become one clear message.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "cli/client/job_listing.h"
#include "common/controller_targets.h"
#include "common/leader_follower.h"
#include "common/tls_credentials.h"
#include "gantry/v1/client.grpc.pb.h"

namespace gantry::cli {

inline constexpr char kDefaultController[] = "unix:/run/gantry/gantryd.sock";
inline constexpr char kControllerVariable[] = "GANTRY_CONTROLLER";

// `flag` wins, then $GANTRY_CONTROLLER (which the [client] table of the
// config file fills when unset, cli/client/client_config.h), then the default
// local socket.
std::string ResolveControllerTarget(const std::string& flag);

// Whether `status` (from ControllerClient::Submit) says that the submission
// may or may not have been stored: never to be reported as "failed".
bool IsOutcomeUnknown(const absl::Status& status);

class ControllerClient {
 public:
  // `target`: one gRPC target, or several separated by commas (the
  // controllers of a highly available cluster; calls go to the leader).
  explicit ControllerClient(std::string target);
  // Not copied or moved: its controller list calls back into it.
  ControllerClient(const ControllerClient&) = delete;
  ControllerClient& operator=(const ControllerClient&) = delete;

  // How long a submission that got no answer (UNAVAILABLE, or a deadline
  // exceeded) is asked again with its submission token: gantryd answers a
  // token it already stored with the job it made, so asking again is safe
  // and never makes a second job.
  static constexpr std::chrono::minutes kSubmissionOutcomeWindow{2};

  // Every call has a deadline; errors carry the controller's message, or say
  // that the controller could not be reached at the target.
  //
  // Submit never reports a failure that may have been a success: when the
  // controller may have received the submission and no answer came within
  // kSubmissionOutcomeWindow, the error is UNAVAILABLE and
  // IsOutcomeUnknown(error) holds; its message names the submission token
  // and how to look for the job.
  absl::Status Submit(const v1::SubmitRequest& request,
                      v1::SubmitResponse& response);
  // Submits every request on SubmitStream (client.proto): many jobs on one
  // connection, each acknowledged once stored. `done(index, job id or
  // error)` is called once per request, from this thread, as the answers
  // come. A submission refused as busy is sent again after a pause; a
  // stream cut by a failover goes on with the next leader, sending again
  // what was not answered (each request's submission token, set here when
  // empty, keeps a resend from making a second job). The status is the
  // stream's last: OK once every request was answered; else the error
  // that ended it, and the unanswered requests were not reported.
  absl::Status SubmitAll(
      std::vector<v1::SubmitRequest> requests,
      const std::function<void(size_t, absl::StatusOr<uint64_t>)>& done);
  absl::Status ListJobs(const v1::ListJobsRequest& request,
                        v1::ListJobsResponse& response);
  // Every page of the listing, appended to `jobs`.
  absl::Status ListAllJobs(v1::ListJobsRequest request, JobListing& jobs);
  absl::Status GetJob(uint64_t job_id, v1::GetJobResponse& response);
  absl::Status GetJob(const v1::GetJobRequest& request,
                      v1::GetJobResponse& response);
  absl::Status Cancel(const v1::CancelRequest& request,
                      v1::CancelResponse& response);
  absl::Status Hold(const v1::HoldRequest& request, v1::HoldResponse& response);
  absl::Status Requeue(const v1::RequeueRequest& request,
                       v1::RequeueResponse& response);
  absl::Status UpdateJob(const v1::UpdateJobRequest& request,
                         v1::UpdateJobResponse& response);
  absl::Status ListNodes(v1::ListNodesResponse& response);
  absl::Status ClusterStatus(v1::ClusterStatusResponse& response);
  absl::Status ReportProgress(const v1::ReportProgressRequest& request,
                              v1::ReportProgressResponse& response);
  absl::Status Drain(const v1::DrainRequest& request,
                     v1::DrainResponse& response);
  absl::Status ImportTopology(const v1::ImportTopologyRequest& request,
                              v1::TopologyReport& response);
  absl::Status GetTopology(v1::TopologyReport& response);
  absl::Status LaunchStep(const v1::LaunchStepRequest& request,
                          v1::LaunchStepResponse& response);
  // Waits up to `wait` for the step's end (DEADLINE_EXCEEDED after).
  absl::Status WaitStep(const v1::WaitStepRequest& request,
                        v1::WaitStepResponse& response,
                        std::chrono::seconds wait);

  absl::Status EndAllocation(const v1::EndAllocationRequest& request,
                             v1::EndAllocationResponse& response);
  // Answers within `wait` (DEADLINE_EXCEEDED after): a keepalive that
  // hangs would be as good as none.
  absl::Status KeepAllocation(const v1::KeepAllocationRequest& request,
                              v1::KeepAllocationResponse& response,
                              std::chrono::milliseconds wait);
  // sstat: every page of the accounting query, appended to `jobs`; the
  // cluster's name into `cluster_name` when given.
  absl::Status Accounting(v1::AccountingRequest request, JobListing& jobs,
                          std::string* cluster_name = nullptr);
  // sacct and sreport: the accounting query's pages one after another, each
  // given to `on_page` as it arrives and dropped after, so that a long
  // history is never held whole. Stops at the first error, `on_page`'s
  // included.
  absl::Status ForEachAccountingPage(
      v1::AccountingRequest request,
      const std::function<absl::Status(const v1::AccountingResponse&)>&
          on_page);
  absl::Status SchedulerReport(v1::SchedulerReportResponse& response);
  // Admin: hand leadership to a standby. The leader re-executes right
  // after its answer, which may thus be cut short: set request.leader, so
  // that a retry reaching the new leader is refused instead of obeyed.
  absl::Status Handover(const v1::HandoverRequest& request,
                        v1::HandoverResponse& response);
  // `gantry cache`. A prefetch or eviction that waits for its nodes
  // (request.wait_seconds) gets that long and a little more to answer.
  absl::Status ListDatasetCache(const v1::ListDatasetCacheRequest& request,
                                v1::ListDatasetCacheResponse& response);
  absl::Status PrefetchDataset(const v1::PrefetchDatasetRequest& request,
                               v1::DatasetCacheActionResponse& response);
  absl::Status EvictDataset(const v1::EvictDatasetRequest& request,
                            v1::DatasetCacheActionResponse& response);

  const std::string& target() const { return target_; }

 private:
  using Stub = v1::ClientService::Stub;
  template <class Request, class Response>
  using Method = grpc::Status (Stub::*)(grpc::ClientContext*, const Request&,
                                        Response*);
  // How long calls look for a leader among several controllers (a failover
  // takes a lease's TTL and an election).
  static constexpr std::chrono::seconds kFailoverWindow{15};
  // One controller of --controller's list.
  struct Target {
    absl::Status setup_error;  // the channel could not be made (TLS files)
    std::unique_ptr<Stub> stub;
  };

  // The channel to one controller (LeaderFollower's MakeEndpoint).
  Target MakeTarget(const std::string& address, bool several) const;
  absl::Status Convert(const grpc::Status& status) const;
  // Sets the deadline and attaches a MUNGE credential for `request` to the
  // method that takes it (common/rpc_methods.h). Fails when the channel
  // could not be made (TLS files).
  template <class Request>
  absl::Status Prepare(grpc::ClientContext& context, const Request& request,
                       std::chrono::milliseconds timeout);
  // Calls `method` on the leading controller (see the .cc); `raw`, when
  // given, gets gRPC's own status of the last attempt.
  template <class Request, class Response>
  absl::Status Invoke(
      Method<Request, Response> method, const Request& request,
      Response& response, grpc::Status* raw = nullptr,
      std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // What Invoke does for any call: `call(stub, context)` makes it and
  // returns its status, tried on the leading controller as Invoke says.
  // `request` is read again before each try (a call may change it between
  // tries, as a listing resumes after the pages it has).
  template <class Request, class Call>
  absl::Status InvokeCall(const Request& request, Call call, grpc::Status* raw,
                          std::chrono::milliseconds timeout);
  // ListAllJobs through the StreamJobs call; UNIMPLEMENTED from a gantryd
  // that predates it.
  absl::Status StreamAllJobs(const v1::ListJobsRequest& request,
                             JobListing& jobs);

  std::string target_;  // as given: one address, or a list
  ClientTls tls_;       // from $GANTRY_TLS_CA, $GANTRY_TLS_SERVER_NAME
  // The controllers and the one calls go to (after tls_: made with it).
  LeaderFollower<Target> controllers_;
  std::string munge_socket_;      // empty: libmunge's default
  std::string credential_error_;  // why the last call went without one
  // Whether a try of the last Invoke got no answer after it may have
  // reached a controller (not merely failed to connect).
  bool last_call_may_have_arrived_ = false;
};

}  // namespace gantry::cli
