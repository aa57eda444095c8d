// Turns a gRPC call into a Caller. With MUNGE (the default) the call must
// carry a credential from the caller's munged (metadata
// kMungeMetadataKey) bound to the method; gantryd decodes it with its own
// munged, so uid and gid are proven, and a replayed, expired, forged or
// other-cluster credential is refused. Agents must prove uid 0: they start
// processes as any user. With authentication off (development only) the
// identity the request claims is taken as is.
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

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "daemon/caller.h"

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

  // A client call to `method` ("Submit"). `claimed_user` and `claimed_uid`
  // are used only with authentication off (claimed_uid < 0: look the name
  // up). UNAUTHENTICATED with the reason when refused.
  absl::StatusOr<Caller> AuthenticateClient(
      const grpc::ServerContextBase& context, std::string_view method,
      std::string_view claimed_user, int64_t claimed_uid = -1) const;

  // An agent's stream. Only uid 0 may serve nodes.
  absl::Status AuthenticateAgent(const grpc::ServerContextBase& context) const;

  // Whether munged answers and accepts its own credential (start-up check).
  absl::Status CheckMunged() const;

  bool uses_munge() const { return options_.use_munge; }

 private:
  Authenticator(AuthOptions options, std::optional<gid_t> admin_gid);

  absl::StatusOr<Caller> Verify(const grpc::ServerContextBase& context,
                                std::string_view method) const;
  Caller Describe(uint32_t uid, uint32_t gid, std::string user) const;

  AuthOptions options_;
  std::optional<gid_t> admin_gid_;
  // The host's user database, looked up on every request otherwise (an
  // open and read of /etc/passwd, or an LDAP round trip, per call).
  std::shared_ptr<UserDirectory> users_;
};

}  // namespace gantry
