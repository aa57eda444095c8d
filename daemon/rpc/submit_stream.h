// The SubmitStream call: many submissions on one stream, for tools that
// submit sweeps (client.proto says what a client sees).
//
// Why it exists: a unary Submit costs gantryd one HTTP/2 exchange, with its
// headers, trailers and system calls, per job; on a small controller that,
// not storing the job, is most of the work. On a stream, a message carries
// many submissions and an ack message answers all that one synced write
// stored, so the cost per job is the job's own.
//
// Each submission goes through the same path as Submit: the same admission
// gate (busy: a RESOURCE_EXHAUSTED ack, the client sends it again), the
// same validation and the same group commit, so an OK ack still means "on
// disk". Every message carries a credential bound to it (client.proto);
// the first one names the stream's user, and a later one of another user
// ends the stream.
//
// Threads: reads and writes complete on gRPC threads, submissions are
// answered on the controller's loop; the state below is under `mutex_`, and
// gRPC is called outside it. The reactor deletes itself in OnDone, which
// gRPC calls only after Finish; Finish waits until every submission read has
// been answered, so no controller callback outlives it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <boost/asio/io_context.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/core/caller.h"
#include "daemon/rpc/admission_gate.h"
#include "daemon/rpc/authenticator.h"
#include "gantry/v1/client.grpc.pb.h"

namespace gantry {

struct SubmitStreamLimits {
  // Submissions in one message; more ends the stream (INVALID_ARGUMENT).
  size_t max_per_message = 1000;
  // Submissions read and not yet answered; at this many gantryd stops
  // reading the stream until half of them are answered.
  size_t max_in_flight = 4096;
};

class SubmitStreamReactor final
    : public grpc::ServerBidiReactor<v1::SubmitStreamRequest,
                                     v1::SubmitStreamReply> {
 public:
  // Starts reading at once. `gate` is shared with unary Submit;
  // `finished` (may be empty) is told the stream's status as it is sent.
  SubmitStreamReactor(grpc::CallbackServerContext* context,
                      boost::asio::io_context& io, Controller& controller,
                      const Authenticator& authenticator, AdmissionGate& gate,
                      const std::function<void(grpc::StatusCode)>& finished,
                      SubmitStreamLimits limits = {});

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override { delete this; }

 private:
  struct Admitted {
    uint64_t sequence;
    v1::SubmitRequest request;
  };

  // What to ask of gRPC once the mutex is released.
  struct Actions {
    bool read = false;
    bool write = false;
    std::optional<grpc::Status> finish;
  };

  // Hands the admitted submissions to the loop, which answers each.
  void Post(std::vector<Admitted> admitted);
  // Any thread: queues the ack of submission `sequence`.
  void Answer(uint64_t sequence, const absl::StatusOr<JobId>& id);

  void QueueAckLocked(uint64_t sequence, const absl::StatusOr<JobId>& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Ends reading: no more submissions are taken from this stream.
  void StopReadingLocked(grpc::Status status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  Actions NextActionsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void Perform(const Actions& actions);

  grpc::CallbackServerContext* const context_;
  boost::asio::io_context& io_;
  Controller& controller_;
  const Authenticator& authenticator_;
  AdmissionGate& gate_;
  const std::function<void(grpc::StatusCode)>& report_status_;
  const SubmitStreamLimits limits_;

  Mutex mutex_;
  // The read callback's, not guarded: gRPC runs one OnReadDone at a time.
  // caller_ is set by the first message and read by Post from there;
  // incoming_ is gRPC's while a read is outstanding.
  std::optional<Caller> caller_;
  v1::SubmitStreamRequest incoming_;
  // gRPC's while a write is outstanding.
  v1::SubmitStreamReply outgoing_ ABSL_GUARDED_BY(mutex_);
  // Acks not yet handed to a write.
  v1::SubmitStreamReply waiting_ ABSL_GUARDED_BY(mutex_);
  uint64_t next_sequence_ ABSL_GUARDED_BY(mutex_) = 0;
  // Read, not yet answered.
  size_t in_flight_ ABSL_GUARDED_BY(mutex_) = 0;
  // A read is outstanding.
  bool reading_ ABSL_GUARDED_BY(mutex_) = false;
  // At max_in_flight.
  bool reading_paused_ ABSL_GUARDED_BY(mutex_) = false;
  // The client half-closed, or reading ended.
  bool reads_done_ ABSL_GUARDED_BY(mutex_) = false;
  bool writing_ ABSL_GUARDED_BY(mutex_) = false;
  // The client is gone: acks are dropped.
  bool writes_failed_ ABSL_GUARDED_BY(mutex_) = false;
  bool finished_ ABSL_GUARDED_BY(mutex_) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mutex_) = grpc::Status::OK;
};

}  // namespace gantry
