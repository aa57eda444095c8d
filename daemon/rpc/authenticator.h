// Turns a gRPC call into a Caller. With MUNGE (the default) the call must
// carry a credential from the caller's munged (metadata kMungeMetadataKey)
// bound to the exact request (common/request_binding.h: the method and a
// digest of the request body); gantryd decodes it with its own munged, so
// uid and gid are proven, and a replayed, expired, forged, other-cluster or
// other-request credential is refused. Agents must prove uid 0: they start
// processes as any user. With authentication off (development only) the
// identity the request claims is taken as is.
//
// Streams. A SubmitStream message carries its own credential, bound to that
// message (AuthenticateCredential), and every message must prove the same
// user: a captured credential vouches for one message, which munged lets
// through once. An agent's Connect credential is bound to the method only:
// the only party who can take a root credential from an agent is on the
// network path, and on plaintext TCP that party can also read the launches
// and write into the stream after it is admitted, so binding each message
// would not stop it; TLS on the TCP listener (gantryd --tls-cert) does, and
// is what agents across an untrusted network should use. munged still
// refuses a Connect credential used twice.
//
// Thread-safe: called from gRPC threads (decoding talks to munged, which
// must not block the controller's loop).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message_lite.h>
#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "daemon/controller/core/caller.h"

namespace gantry {

struct AuthOptions {
  bool use_munge = true;
  std::string munge_socket;  // empty: libmunge's default
  std::string admin_group;   // empty: only root is an admin
};

// Whether a user with these groups is an admin: root always is; others when
// `admin_gid` is among their groups.
bool IsAdmin(uint32_t uid, const std::vector<gid_t>& groups,
             std::optional<gid_t> admin_gid);

// Name and uid lookups in the host's user database, remembered for a short
// while. Thread-safe. Defined in authenticator.cc.
class UserDirectory;

class Authenticator {
 public:
  // INVALID_ARGUMENT when the admin group does not exist on this host.
  static absl::StatusOr<Authenticator> Create(AuthOptions options);

  // A client call to `method` ("Submit") carrying `request`: its credential
  // must have been made for this very request. `claimed_user` and
  // `claimed_uid` are used only with authentication off (claimed_uid < 0:
  // look the name up). UNAUTHENTICATED with the reason when refused.
  absl::StatusOr<Caller> AuthenticateClient(
      const grpc::ServerContextBase& context, std::string_view method,
      const google::protobuf::MessageLite& request,
      std::string_view claimed_user, int64_t claimed_uid = -1) const;

  // A credential carried in a message (SubmitStream) instead of the call's
  // metadata; `request` is the message as its credential was made for it
  // (its credential field empty). MUNGE only. UNAUTHENTICATED when refused.
  absl::StatusOr<Caller> AuthenticateCredential(
      std::string_view credential, std::string_view method,
      const google::protobuf::MessageLite& request) const;

  // An agent's stream. Only uid 0 may serve nodes.
  absl::Status AuthenticateAgent(const grpc::ServerContextBase& context) const;

  // Whether munged answers and accepts its own credential (start-up check).
  absl::Status CheckMunged() const;

  bool uses_munge() const { return options_.use_munge; }

 private:
  Authenticator(AuthOptions options, std::optional<gid_t> admin_gid);

  // `credential` absent: the request carried none. `request` null: the
  // credential is bound to the method only (Connect).
  absl::StatusOr<Caller> Verify(
      std::optional<std::string_view> credential, std::string_view method,
      const google::protobuf::MessageLite* request) const;
  Caller Describe(uint32_t uid, uint32_t gid, std::string user) const;

  AuthOptions options_;
  std::optional<gid_t> admin_gid_;
  // The host's user database, looked up on every request otherwise (an
  // open and read of /etc/passwd, or an LDAP round trip, per call).
  std::shared_ptr<UserDirectory> users_;
};

}  // namespace gantry
