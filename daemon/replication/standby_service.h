// What a standby gantryd serves on the controller's ports: every call, of
// any method, is answered UNAVAILABLE with where the leader is (in the
// message, for people, and in the `gantry-leader` trailing metadata, for
// the CLI and agents, which redial it). A standby holds a copy of the
// state but no controller, so it answers nothing else.
//
// One StandbyService holds the answer (the leader, or why none is known);
// each gRPC server it answers on gets its own endpoint (NewEndpoint), since
// gRPC lets a callback generic service be registered with one server only
// (a standby has two: the TCP port and the unix socket).
//
// Thread-safe: the leader is updated from the campaign's thread while gRPC
// threads answer. Endpoints must not outlive the service.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "common/controller_targets.h"
#include "common/mutex.h"
#include "gantry/v1/replication.pb.h"

namespace gantry::replication {

class StandbyService {
 public:
  explicit StandbyService(std::string self_name)
      : self_name_(std::move(self_name)) {}

  void SetLeader(const std::optional<v1::ControllerMember>& leader);
  // Why no leader is known (etcd unreachable, no quorum), for the answer.
  void SetTrouble(std::string trouble);

  // A service to register with one server; it answers as this one does.
  std::unique_ptr<grpc::CallbackGenericService> NewEndpoint();

  // The refusal for one call, with the leader in `context`'s trailers.
  grpc::Status Answer(grpc::GenericCallbackServerContext* context);

 private:
  const std::string self_name_;
  Mutex mutex_;
  std::optional<v1::ControllerMember> leader_ ABSL_GUARDED_BY(mutex_);
  std::string trouble_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace gantry::replication
