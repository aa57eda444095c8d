#include "common/munge_credential.h"

#include <munge.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

struct ContextDeleter {
  void operator()(munge_ctx_t context) const { munge_ctx_destroy(context); }
};
using MungeContext =
    std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, ContextDeleter>;

absl::StatusOr<MungeContext> MakeContext(std::string_view socket) {
  MungeContext context(munge_ctx_create());
  if (!context) return absl::ResourceExhaustedError("munge_ctx_create failed");
  if (!socket.empty()) {
    const std::string path(socket);
    if (munge_ctx_set(context.get(), MUNGE_OPT_SOCKET, path.c_str()) !=
        EMUNGE_SUCCESS) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad munged socket path ", path));
    }
  }
  return context;
}

std::string SocketName(std::string_view socket) {
  return socket.empty() ? std::string("the default munged socket")
                        : absl::StrCat("munged at ", std::string(socket));
}

}  // namespace

absl::StatusOr<std::string> EncodeMungeCredential(std::string_view socket,
                                                  std::string_view payload) {
  absl::StatusOr<MungeContext> context = MakeContext(socket);
  if (!context.ok()) return context.status();
  char* credential = nullptr;
  munge_err_t error = munge_encode(&credential, context->get(), payload.data(),
                                   static_cast<int>(payload.size()));
  if (error != EMUNGE_SUCCESS) {
    std::free(credential);
    return absl::UnavailableError(
        absl::StrCat("cannot get a MUNGE credential from ", SocketName(socket),
                     ": ", munge_strerror(error), " (is munged running? set ",
                     kMungeSocketVariable, " if it listens elsewhere)"));
  }
  std::string result(credential);
  std::free(credential);
  return result;
}

absl::StatusOr<MungeIdentity> DecodeMungeCredential(
    std::string_view socket, std::string_view credential) {
  absl::StatusOr<MungeContext> context = MakeContext(socket);
  if (!context.ok()) return context.status();
  const std::string text(credential);
  void* payload = nullptr;
  int length = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  munge_err_t error =
      munge_decode(text.c_str(), context->get(), &payload, &length, &uid, &gid);
  MungeIdentity identity;
  if (payload != nullptr) {
    identity.payload.assign(static_cast<const char*>(payload),
                            static_cast<size_t>(length));
    std::free(payload);
  }
  switch (error) {
    case EMUNGE_SUCCESS:
      identity.uid = uid;
      identity.gid = gid;
      return identity;
    case EMUNGE_SOCKET:
    case EMUNGE_TIMEOUT:
    case EMUNGE_NO_MEMORY:
    case EMUNGE_SNAFU:
      return absl::UnavailableError(
          absl::StrCat("cannot check the MUNGE credential with ",
                       SocketName(socket), ": ", munge_strerror(error)));
    case EMUNGE_CRED_REPLAYED:
      return absl::UnauthenticatedError(
          "MUNGE credential replayed: it was already used once");
    case EMUNGE_CRED_EXPIRED:
    case EMUNGE_CRED_REWOUND:
      return absl::UnauthenticatedError(absl::StrCat(
          "MUNGE credential ", munge_strerror(error),
          " (are the clocks of this host and the controller in sync?)"));
    case EMUNGE_CRED_INVALID:
      return absl::UnauthenticatedError(
          "MUNGE credential invalid: not made with this cluster's key "
          "(check /etc/munge/munge.key is the same on every host)");
    default:
      return absl::UnauthenticatedError(
          absl::StrCat("MUNGE credential refused: ", munge_strerror(error)));
  }
}

}  // namespace gantry
