// Who is making a client call, as the unary calls (unary_relay.h) and the
// submit stream (submit_stream.h) both ask it: the authenticator's answer
// (authenticator.h) plus the checks and the log line every front end owes a
// refusal.
//
// Thread-safe; called on gRPC threads, never on the controller's loop:
// decoding a credential talks to munged.
#pragma once

#include <cstdint>
#include <string_view>

#include <google/protobuf/message_lite.h>
#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "daemon/controller/core/caller.h"
#include "daemon/rpc/authenticator.h"

namespace gantry {

// The caller of a client call to `method` ("Submit") carrying `request`,
// or the refusal, logged with the peer. `claimed_user` and `claimed_uid`
// are the identity the request claims (used only with authentication off;
// claimed_uid < 0: look the name up); a claimed name that is not safe to
// show is refused first, whatever the authentication, without a log line.
absl::StatusOr<Caller> AuthenticateClientCall(
    const Authenticator& authenticator,
    const grpc::CallbackServerContext& context, std::string_view method,
    const google::protobuf::MessageLite& request, std::string_view claimed_user,
    int64_t claimed_uid = -1);

// Logs `caller` when it is a refusal of a call to `method`; returns it.
absl::StatusOr<Caller> LogIfRefused(absl::StatusOr<Caller> caller,
                                    const grpc::CallbackServerContext& context,
                                    std::string_view method);

}  // namespace gantry
