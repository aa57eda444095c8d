#include "daemon/rpc/submit_stream.h"

#include <string>
#include <utility>

#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "common/rpc_methods.h"
#include "daemon/rpc/call_authentication.h"
#include "daemon/rpc/grpc_status.h"

namespace gantry {
namespace {

// What every message's credential is bound to.
constexpr std::string_view kMethod = kMethodFor<v1::SubmitStreamRequest>;

}  // namespace

SubmitStreamReactor::SubmitStreamReactor(
    grpc::CallbackServerContext* context, boost::asio::io_context& io,
    Controller& controller, const Authenticator& authenticator,
    AdmissionGate& gate, const std::function<void(grpc::StatusCode)>& finished,
    SubmitStreamLimits limits)
    : context_(context),
      io_(io),
      controller_(controller),
      authenticator_(authenticator),
      gate_(gate),
      report_status_(finished),
      limits_(limits) {
  reading_ = true;
  StartRead(&incoming_);
}

void SubmitStreamReactor::OnReadDone(bool ok) {
  // Each message vouches for itself: its credential is bound to its own
  // submissions, so one captured on the way cannot carry others. Checking it
  // talks to munged, so it happens before the mutex is taken (the loop
  // answers under it and must never wait on munged); incoming_ is this
  // callback's until it asks for the next read.
  std::optional<absl::StatusOr<Caller>> signer;
  if (ok && authenticator_.uses_munge()) {
    const std::string credential = std::move(*incoming_.mutable_credential());
    incoming_.clear_credential();
    signer = LogIfRefused(
        authenticator_.AuthenticateCredential(credential, kMethod, incoming_),
        *context_, kMethod);
  }
  std::vector<Admitted> admitted;
  Actions actions;
  {
    MutexLock lock(mutex_);
    reading_ = false;
    if (!ok) {
      reads_done_ = true;  // half-closed by the client, or cancelled
      actions = NextActionsLocked();
    } else if (reads_done_) {
      incoming_.Clear();  // read before the stream was ended; not taken
      actions = NextActionsLocked();
    } else if (incoming_.submissions_size() == 0 ||
               static_cast<size_t>(incoming_.submissions_size()) >
                   limits_.max_per_message) {
      StopReadingLocked(grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat("a SubmitStream message carries 1 to ",
                       limits_.max_per_message, " submissions, not ",
                       incoming_.submissions_size())));
      actions = NextActionsLocked();
    } else {
      if (signer && !signer->ok()) {
        StopReadingLocked(ToGrpcStatus(signer->status()));
      } else if (signer && caller_ && (*signer)->uid != caller_->uid) {
        StopReadingLocked(grpc::Status(
            grpc::StatusCode::PERMISSION_DENIED,
            absl::StrCat("this stream submits as ", caller_->user, " (uid ",
                         caller_->uid, "), not as ", (*signer)->user, " (uid ",
                         (*signer)->uid, "): one stream, one user")));
      } else if (!caller_) {
        // Without MUNGE, the first submission's claim names the stream's
        // user.
        absl::StatusOr<Caller> caller =
            signer ? std::move(*signer)
                   : AuthenticateClientCall(authenticator_, *context_, kMethod,
                                            incoming_,
                                            incoming_.submissions(0).user(),
                                            incoming_.submissions(0).uid());
        if (caller.ok()) {
          caller_ = std::move(*caller);
        } else {
          StopReadingLocked(ToGrpcStatus(caller.status()));
        }
      }
      if (caller_ && !reads_done_) {
        admitted.reserve(incoming_.submissions_size());
        for (v1::SubmitRequest& request : *incoming_.mutable_submissions()) {
          const uint64_t sequence = next_sequence_++;
          ++in_flight_;
          if (!authenticator_.uses_munge() && request.user() != caller_->user) {
            // Without credentials the claim is the identity: one stream,
            // one claimed user, as with MUNGE's one proven user.
            QueueAckLocked(sequence,
                           absl::PermissionDeniedError(absl::StrCat(
                               "this stream submits as ", caller_->user,
                               ", not as \"", request.user(), "\"")));
          } else if (!gate_.TryEnter()) {
            QueueAckLocked(sequence, gate_.Busy());
          } else {
            admitted.push_back(Admitted{sequence, {}});
            admitted.back().request.Swap(&request);
          }
        }
        incoming_.Clear();
        if (in_flight_ >= limits_.max_in_flight) reading_paused_ = true;
      }
      actions = NextActionsLocked();
    }
  }
  if (!admitted.empty()) Post(std::move(admitted));
  Perform(actions);
}

void SubmitStreamReactor::Post(std::vector<Admitted> admitted) {
  // One closure per message: the loop takes the whole message in one turn,
  // so its submissions share a synced write.
  boost::asio::post(
      io_, [this, admitted = std::move(admitted), caller = *caller_]() mutable {
        for (Admitted& submission : admitted) {
          controller_.Submit(
              std::move(submission.request), caller,
              [this, sequence = submission.sequence](absl::StatusOr<JobId> id) {
                gate_.Leave();
                Answer(sequence, id);
              });
        }
      });
}

void SubmitStreamReactor::Answer(uint64_t sequence,
                                 const absl::StatusOr<JobId>& id) {
  Actions actions;
  {
    MutexLock lock(mutex_);
    QueueAckLocked(sequence, id);
    actions = NextActionsLocked();
  }
  Perform(actions);
}

void SubmitStreamReactor::QueueAckLocked(uint64_t sequence,
                                         const absl::StatusOr<JobId>& id) {
  --in_flight_;
  if (writes_failed_) return;  // nobody to tell; the job is stored anyway
  v1::SubmitAck* ack = waiting_.add_acks();
  ack->set_sequence(sequence);
  if (id.ok()) {
    ack->set_job_id(id->value());
  } else {
    ack->set_code(static_cast<int32_t>(id.status().code()));
    ack->set_error(std::string(id.status().message()));
  }
}

void SubmitStreamReactor::OnWriteDone(bool ok) {
  Actions actions;
  {
    MutexLock lock(mutex_);
    writing_ = false;
    outgoing_.Clear();
    if (!ok) {
      // The client is gone. What it submitted is still stored (as with a
      // unary Submit whose caller left); stop reading more.
      writes_failed_ = true;
      waiting_.Clear();
      StopReadingLocked(grpc::Status(grpc::StatusCode::CANCELLED,
                                     "the client stopped reading acks"));
    }
    actions = NextActionsLocked();
  }
  Perform(actions);
}

void SubmitStreamReactor::StopReadingLocked(grpc::Status status) {
  if (final_status_.ok()) final_status_ = std::move(status);
  reads_done_ = true;
}

SubmitStreamReactor::Actions SubmitStreamReactor::NextActionsLocked() {
  Actions actions;
  if (finished_) return actions;
  if (!writing_ && !writes_failed_ && waiting_.acks_size() > 0) {
    // Every ack queued since the last write goes in this one: after a
    // synced write, that is all the stream's submissions it stored.
    outgoing_.Swap(&waiting_);
    writing_ = true;
    actions.write = true;
  }
  if (reading_paused_ && in_flight_ <= limits_.max_in_flight / 2) {
    reading_paused_ = false;
  }
  if (!reading_ && !reads_done_ && !reading_paused_) {
    reading_ = true;
    actions.read = true;
  }
  if (reads_done_ && !reading_ && in_flight_ == 0 && !writing_ &&
      (writes_failed_ || waiting_.acks_size() == 0)) {
    finished_ = true;
    actions.finish = final_status_;
  }
  return actions;
}

void SubmitStreamReactor::Perform(const Actions& actions) {
  if (actions.write) StartWrite(&outgoing_);
  if (actions.read) StartRead(&incoming_);
  if (actions.finish) {
    if (report_status_) report_status_(actions.finish->error_code());
    Finish(*actions.finish);
  }
}

}  // namespace gantry
