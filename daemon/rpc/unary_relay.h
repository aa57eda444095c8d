// The one way a unary call of the client API (grpc_services.h) runs:
//
//   1. on the gRPC thread, authenticate the caller for the method its
//      request type names (common/rpc_methods.h, call_authentication.h):
//      decoding a credential talks to munged and must not stall the loop;
//   2. still there, the checks that refuse a request before the loop sees
//      it (validation that refuses an outsized request whole, the
//      submissions' admission gate);
//   3. post the work to the controller's loop, which finishes the call,
//      at once or from a controller callback.
//
// A refusal at 1 or 2 finishes the call at once with its status (logged
// at 1); the RPC metrics count every call's status on their own
// (rpc_metrics_interceptor.h). The reactor is gRPC's default one: nothing
// to free, and it must be finished exactly once.
//
// Thread-safe: Relay runs on gRPC threads; the work, and the finishing,
// on the controller's loop.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include <grpcpp/grpcpp.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/rpc_methods.h"
#include "daemon/controller/core/caller.h"
#include "daemon/rpc/authenticator.h"
#include "daemon/rpc/call_authentication.h"
#include "daemon/rpc/grpc_status.h"

namespace gantry {

// The identity a request claims; read only with authentication off
// (authenticator.h).
struct ClaimedIdentity {
  std::string_view user;  // empty: the request names nobody
  int64_t uid = -1;       // < 0: look the name up
};
inline constexpr ClaimedIdentity kClaimsNobody{};

// Finishes one unary call. Copyable, so that the controller's callbacks
// can carry it; one of its members is called exactly once per call.
class UnaryFinish {
 public:
  explicit UnaryFinish(grpc::ServerUnaryReactor* reactor) : reactor_(reactor) {}

  // Finishes with `status`; also a controller callback that answers with a
  // status only.
  void operator()(const absl::Status& status) const {
    reactor_->Finish(ToGrpcStatus(status));
  }

  // Finishes with `result`'s error, or with OK once its value is in
  // `*response`.
  template <class Message>
  void Answer(Message* response,
              std::type_identity_t<absl::StatusOr<Message>> result) const {
    if (result.ok()) *response = std::move(*result);
    (*this)(result.status());
  }

  // Answer as a controller callback: it takes a StatusOr<Message> or,
  // for calls that cannot fail once admitted, a Message.
  template <class Message>
  auto AnswerInto(Message* response) const {
    return [finish = *this, response](absl::StatusOr<Message> result) {
      finish.Answer(response, std::move(result));
    };
  }

 private:
  grpc::ServerUnaryReactor* reactor_;
};

class UnaryRelay {
 public:
  UnaryRelay(boost::asio::io_context& io, const Authenticator& authenticator)
      : io_(io), authenticator_(authenticator) {}

  // Runs the call of `context` carrying `request` as above: `check(request)`
  // (an absl::Status) at step 2, then `work(caller, finish)` (Caller,
  // UnaryFinish) on the loop. Returns the call's reactor, for gRPC.
  template <class Request, class Check, class Work>
  grpc::ServerUnaryReactor* Relay(grpc::CallbackServerContext* context,
                                  const Request& request, ClaimedIdentity claim,
                                  Check check, Work work) const {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    const UnaryFinish finish(reactor);
    absl::StatusOr<Caller> caller =
        AuthenticateClientCall(authenticator_, *context, kMethodFor<Request>,
                               request, claim.user, claim.uid);
    if (!caller.ok()) {
      finish(caller.status());
      return reactor;
    }
    if (absl::Status checked = check(request); !checked.ok()) {
      finish(checked);
      return reactor;
    }
    boost::asio::post(io_, [work = std::move(work), caller = std::move(*caller),
                            finish] { work(caller, finish); });
    return reactor;
  }

  // A call with nothing to check before the loop.
  template <class Request, class Work>
  grpc::ServerUnaryReactor* Relay(grpc::CallbackServerContext* context,
                                  const Request& request, ClaimedIdentity claim,
                                  Work work) const {
    return Relay(
        context, request, claim,
        [](const Request&) { return absl::OkStatus(); }, std::move(work));
  }

 private:
  boost::asio::io_context& io_;
  const Authenticator& authenticator_;
};

}  // namespace gantry
