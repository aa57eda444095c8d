#include "daemon/rpc/call_authentication.h"

#include <string>

#include "common/log.h"
#include "daemon/controller/core/request_validation.h"

namespace gantry {

absl::StatusOr<Caller> AuthenticateClientCall(
    const Authenticator& authenticator,
    const grpc::CallbackServerContext& context, std::string_view method,
    const google::protobuf::MessageLite& request, std::string_view claimed_user,
    int64_t claimed_uid) {
  // With --auth=none the claimed name becomes the job's owner, shown in
  // every listing.
  if (absl::Status valid = ValidateClaimedUser(claimed_user); !valid.ok()) {
    return valid;
  }
  return LogIfRefused(authenticator.AuthenticateClient(
                          context, method, request, claimed_user, claimed_uid),
                      context, method);
}

absl::StatusOr<Caller> LogIfRefused(absl::StatusOr<Caller> caller,
                                    const grpc::CallbackServerContext& context,
                                    std::string_view method) {
  if (!caller.ok()) {
    log::Warn("request refused", {{"method", std::string(method)},
                                  {"peer", context.peer()},
                                  {"error", caller.status().ToString()}});
  }
  return caller;
}

}  // namespace gantry
