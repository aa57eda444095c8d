#include "daemon/rpc/job_list_stream.h"

#include <boost/asio/post.hpp>

#include "common/rpc_methods.h"
#include "daemon/rpc/call_authentication.h"
#include "daemon/rpc/grpc_status.h"

namespace gantry {

JobListStream::JobListStream(grpc::CallbackServerContext* context,
                             const v1::StreamJobsRequest& request,
                             boost::asio::io_context& io,
                             Controller& controller,
                             const Authenticator& authenticator)
    : io_(io), controller_(controller), listing_(request.listing()) {
  absl::StatusOr<Caller> caller = AuthenticateClientCall(
      authenticator, *context, kMethodFor<v1::StreamJobsRequest>, request, "");
  if (!caller.ok()) {
    Finish(ToGrpcStatus(caller.status()));
    return;
  }
  caller_ = *std::move(caller);
  if (listing_.page_size() == 0) listing_.set_page_size(kDefaultPageJobs);
  PostNextPage();
}

void JobListStream::PostNextPage() {
  boost::asio::post(io_, [this] { NextPage(); });
}

void JobListStream::NextPage() {
  if (cancelled_) {
    Finish(
        grpc::Status(grpc::StatusCode::CANCELLED, "the listing was cancelled"));
    return;
  }
  absl::StatusOr<v1::ListJobsResponse> page =
      controller_.ListJobs(listing_, caller_);
  if (!page.ok()) {
    Finish(ToGrpcStatus(page.status()));
    return;
  }
  page_ = *std::move(page);
  if (page_.next_page_token().empty()) {
    StartWriteAndFinish(&page_, grpc::WriteOptions(), grpc::Status::OK);
    return;
  }
  listing_.set_page_token(page_.next_page_token());
  StartWrite(&page_);
}

void JobListStream::OnWriteDone(bool ok) {
  if (!ok) {
    // The client is gone or the call was cut: nothing more can be sent.
    Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                        "the listing's client stopped reading"));
    return;
  }
  PostNextPage();
}

}  // namespace gantry
