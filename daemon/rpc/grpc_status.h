// The one place where gantryd's absl::Status becomes the grpc::Status a
// call or stream finishes with: the codes are the same numbers, the message
// is kept. Pure; thread-safe.
#pragma once

#include <string>

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace gantry {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

}  // namespace gantry
