// The method names that MUNGE credentials are bound to
// (common/request_binding.h), one table for the clients that make the
// credentials and for gantryd, which checks them.
//
// A client call's name comes from its request type (kMethodFor<Request>),
// so the CLI and gantryd cannot spell it differently, and a request type
// that no call takes does not compile. The names are client.proto's RPC
// names (tests/unit/common/rpc_methods_test.cc checks each against the
// service). They are part of the wire: renaming one makes gantryd refuse
// every credential an older client makes for that call.
//
// Constants only; thread-safe.
#pragma once

#include <string_view>

#include "gantry/v1/client.pb.h"

namespace gantry {

// The client call that takes `Request`; specialized below for each.
template <class Request>
struct ClientMethod;

template <>
struct ClientMethod<v1::SubmitRequest> {
  static constexpr std::string_view kName = "Submit";
};
// Each message of the stream carries its own credential, bound to it.
template <>
struct ClientMethod<v1::SubmitStreamRequest> {
  static constexpr std::string_view kName = "SubmitStream";
};
template <>
struct ClientMethod<v1::ListJobsRequest> {
  static constexpr std::string_view kName = "ListJobs";
};
template <>
struct ClientMethod<v1::StreamJobsRequest> {
  static constexpr std::string_view kName = "StreamJobs";
};
template <>
struct ClientMethod<v1::GetJobRequest> {
  static constexpr std::string_view kName = "GetJob";
};
template <>
struct ClientMethod<v1::CancelRequest> {
  static constexpr std::string_view kName = "Cancel";
};
template <>
struct ClientMethod<v1::HoldRequest> {
  static constexpr std::string_view kName = "Hold";
};
template <>
struct ClientMethod<v1::ListNodesRequest> {
  static constexpr std::string_view kName = "ListNodes";
};
template <>
struct ClientMethod<v1::ClusterStatusRequest> {
  static constexpr std::string_view kName = "ClusterStatus";
};
template <>
struct ClientMethod<v1::ReportProgressRequest> {
  static constexpr std::string_view kName = "ReportProgress";
};
template <>
struct ClientMethod<v1::DrainRequest> {
  static constexpr std::string_view kName = "Drain";
};
template <>
struct ClientMethod<v1::ImportTopologyRequest> {
  static constexpr std::string_view kName = "ImportTopology";
};
template <>
struct ClientMethod<v1::GetTopologyRequest> {
  static constexpr std::string_view kName = "GetTopology";
};
template <>
struct ClientMethod<v1::LaunchStepRequest> {
  static constexpr std::string_view kName = "LaunchStep";
};
template <>
struct ClientMethod<v1::WaitStepRequest> {
  static constexpr std::string_view kName = "WaitStep";
};
template <>
struct ClientMethod<v1::RequeueRequest> {
  static constexpr std::string_view kName = "Requeue";
};
template <>
struct ClientMethod<v1::UpdateJobRequest> {
  static constexpr std::string_view kName = "UpdateJob";
};
template <>
struct ClientMethod<v1::EndAllocationRequest> {
  static constexpr std::string_view kName = "EndAllocation";
};
template <>
struct ClientMethod<v1::AccountingRequest> {
  static constexpr std::string_view kName = "Accounting";
};
template <>
struct ClientMethod<v1::SchedulerReportRequest> {
  static constexpr std::string_view kName = "SchedulerReport";
};
template <>
struct ClientMethod<v1::KeepAllocationRequest> {
  static constexpr std::string_view kName = "KeepAllocation";
};
template <>
struct ClientMethod<v1::HandoverRequest> {
  static constexpr std::string_view kName = "Handover";
};
template <>
struct ClientMethod<v1::ListDatasetCacheRequest> {
  static constexpr std::string_view kName = "ListDatasetCache";
};
template <>
struct ClientMethod<v1::PrefetchDatasetRequest> {
  static constexpr std::string_view kName = "PrefetchDataset";
};
template <>
struct ClientMethod<v1::EvictDatasetRequest> {
  static constexpr std::string_view kName = "EvictDataset";
};

// The name a credential for `Request` is bound to.
template <class Request>
inline constexpr std::string_view kMethodFor = ClientMethod<Request>::kName;

// An agent's Connect: its credential is bound to the method only, not to
// the stream's messages (daemon/rpc/authenticator.h says why).
inline constexpr std::string_view kAgentConnectMethod = "Connect";

}  // namespace gantry
