// What a Gantry MUNGE credential vouches for: the exact request it was made
// for. Its payload names the RPC method and a SHA-256 digest of the method
// and the request's deterministic protobuf serialization; gantryd computes
// the digest again over the request it received and refuses a mismatch. So a
// credential captured on its way to gantryd (TCP is plaintext unless TLS is
// configured) and kept from arriving cannot be spent on another request body:
// another user's Cancel of other jobs, another script in a Submit. munged's
// replay cache refuses the same credential a second time, so the captured
// request itself cannot be repeated either.
//
// Streams: a SubmitStream message carries its own credential over that
// message (client.proto); an agent's Connect credential is bound to the
// method only (daemon/rpc/authenticator.h argues why, and why TLS is what
// protects agents' streams).
//
// Both sides must serialize alike: deterministic serialization orders map
// entries; fields one side does not know are kept and serialized after the
// known ones, so a client with a newer client.proto that sets a field this
// gantryd does not know may be refused (UNAUTHENTICATED, digest mismatch).
//
// Pure functions, thread-safe; EncodeRequestCredential talks to munged.
#pragma once

#include <string>
#include <string_view>

#include <google/protobuf/message_lite.h>

#include "absl/status/statusor.h"

namespace gantry {

// Lower-case hex SHA-256 of `method`, a NUL byte and `request`'s
// deterministic serialization.
std::string RequestDigest(std::string_view method,
                          const google::protobuf::MessageLite& request);

// "gantry:<method>:<RequestDigest>": the payload of a credential for this
// request.
std::string MungePayloadForRequest(
    std::string_view method, const google::protobuf::MessageLite& request);

// A credential from munged at `socket` (empty: libmunge's default) bound to
// this request. UNAVAILABLE when munged cannot be reached.
absl::StatusOr<std::string> EncodeRequestCredential(
    std::string_view socket, std::string_view method,
    const google::protobuf::MessageLite& request);

// Why a credential with `payload` does not vouch for `request` to `method`,
// as a message that says which request it was made for; empty when it does.
std::string PayloadMismatch(std::string_view payload, std::string_view method,
                            const google::protobuf::MessageLite& request);

}  // namespace gantry
