// The StreamJobs call: a job listing as a stream of pages (client.proto).
//
// Why a stream: a listing of 50,000 jobs in unary pages is ten calls one
// after another, the controller building a page while the client waits and
// the client parsing it while the controller idles. Here the next page is
// built as soon as the last one is on its way, on the controller's loop,
// one page per turn (about a millisecond per thousand jobs), so other work
// runs between pages and the client parses as the controller builds.
//
// Threads: the reactor is made on a gRPC thread, which authenticates the
// caller (never on the loop: it may talk to munged); pages are built on
// the loop, which posts nothing else: each turn ends with a write or
// Finish, and the next turn is posted only from that write's OnWriteDone,
// so no loop task outlives the call. A cancelled call is finished at its
// next turn. The reactor deletes itself in OnDone.
#pragma once

#include <atomic>

#include <grpcpp/grpcpp.h>
#include <boost/asio/io_context.hpp>

#include "daemon/controller/controller.h"
#include "daemon/controller/core/caller.h"
#include "daemon/rpc/authenticator.h"
#include "gantry/v1/client.grpc.pb.h"

namespace gantry {

class JobListStream final
    : public grpc::ServerWriteReactor<v1::ListJobsResponse> {
 public:
  // Jobs per page when the request names no size.
  static constexpr uint32_t kDefaultPageJobs = 1000;

  JobListStream(grpc::CallbackServerContext* context,
                const v1::StreamJobsRequest& request,
                boost::asio::io_context& io, Controller& controller,
                const Authenticator& authenticator);

  void OnWriteDone(bool ok) override;
  void OnCancel() override { cancelled_ = true; }
  void OnDone() override { delete this; }

 private:
  // On the loop: builds and writes the next page, or finishes the call.
  void NextPage();
  void PostNextPage();

  boost::asio::io_context& io_;
  Controller& controller_;
  v1::ListJobsRequest listing_;  // its page_token advances page by page
  Caller caller_;
  v1::ListJobsResponse page_;  // the page being written
  std::atomic<bool> cancelled_{false};
};

}  // namespace gantry
