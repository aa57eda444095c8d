// What gantry-submit-bench's commands share (submit_bench.cc): the request
// `gantry batch` would send, channels and call settings as the CLI's, and
// the figures it prints.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/munge_credential.h"
#include "common/request_binding.h"
#include "common/rpc_methods.h"
#include "gantry/v1/client.grpc.pb.h"

namespace gantry::bench {

// Now, as a Unix time in seconds.
double UnixSeconds();

// The request `gantry batch WORDS` would send (same parsing, same builder),
// from the current directory.
absl::StatusOr<v1::SubmitRequest> BatchRequest(
    const std::vector<std::string>& words);

// A channel to the controller. gRPC shares one connection among channels
// with equal arguments unless told otherwise; `own_connection` gives this
// channel its own, as a separate client process would have. Reconnection
// backs off briefly, so clients are back as soon as a restarted controller
// listens.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           bool own_connection,
                                           int reconnect_ms);

// Deadline and credential for one call, as the CLI's ControllerClient sets
// them (a fresh MUNGE credential bound to the request, for every call).
// Calls wait for a connection (until the deadline) instead of failing at
// once while there is none: a synchronous gRPC client makes progress on a
// reconnection only while a call waits (otherwise gRPC's backup poller
// looks every 5 s), so clients that fail fast and retry would not see a
// restarted controller for seconds.
struct CallSettings {
  bool munge = true;
  std::string munge_socket;  // empty: libmunge's default
  std::chrono::milliseconds deadline{10'000};
  bool wait_for_ready = true;

  // Errors: the credential could not be made (munged unreachable).
  template <class Request>
  absl::Status Prepare(grpc::ClientContext& context,
                       const Request& request) const {
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    context.set_wait_for_ready(wait_for_ready);
    if (!munge) return absl::OkStatus();
    absl::StatusOr<std::string> credential =
        EncodeRequestCredential(munge_socket, kMethodFor<Request>, request);
    if (!credential.ok()) return credential.status();
    context.AddMetadata(kMungeMetadataKey, *credential);
    return absl::OkStatus();
  }

  // A SubmitStream message carries its own credential, over the message.
  absl::Status Sign(v1::SubmitStreamRequest& message) const {
    message.clear_credential();
    if (!munge) return absl::OkStatus();
    absl::StatusOr<std::string> credential = EncodeRequestCredential(
        munge_socket, kMethodFor<v1::SubmitStreamRequest>, message);
    if (!credential.ok()) return credential.status();
    message.set_credential(*std::move(credential));
    return absl::OkStatus();
  }
};

std::string CodeName(grpc::StatusCode code);

// The nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double fraction);

// This process's CPU time (user and system), in seconds.
double CpuSeconds();

}  // namespace gantry::bench
