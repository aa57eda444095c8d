// MUNGE credentials, as Slurm uses them: the caller asks its local munged for
// a credential that names its uid and gid; the controller asks its own
// munged (same cluster key) to decode it. munged refuses credentials made
// with another key, expired ones, and any credential decoded a second time
// (replay), so a credential proves who sent one request.
//
// Each call talks to munged over its unix socket (a fraction of a
// millisecond); thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gantry {

// The gRPC metadata key that carries a credential.
inline constexpr char kMungeMetadataKey[] = "gantry-munge-credential";

// The environment variable that names a non-default munged socket for the
// CLI (and so for jobs, which inherit it).
inline constexpr char kMungeSocketVariable[] = "GANTRY_MUNGE_SOCKET";

// The payload of a credential bound to the RPC `method` only: an agent's
// Connect (daemon/rpc/authenticator.h says why). Client requests are bound to
// the request itself (common/request_binding.h).
inline std::string MungePayloadFor(std::string_view method) {
  return "gantry:" + std::string(method);
}

struct MungeIdentity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string payload;  // what the encoder bound into the credential
};

// Asks munged (at `socket`; empty: libmunge's default) for a credential for
// the calling process carrying `payload`. UNAVAILABLE when munged cannot be
// reached, with what to do about it.
absl::StatusOr<std::string> EncodeMungeCredential(std::string_view socket,
                                                  std::string_view payload);

// Decodes `credential` with munged at `socket`. UNAUTHENTICATED with the
// reason (another cluster's key, expired, replayed, malformed) when munged
// refuses it; UNAVAILABLE when munged cannot be reached.
absl::StatusOr<MungeIdentity> DecodeMungeCredential(
    std::string_view socket, std::string_view credential);

}  // namespace gantry
