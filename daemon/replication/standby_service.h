// What a standby gantryd serves on the controller's ports: every call, of
// any method, is answered UNAVAILABLE with where the leader is (in the
// message, for people, and in the `gantry-leader` trailing metadata, for
// the CLI and agents, which redial it). A standby holds a copy of the
// state but no controller, so it answers nothing else.
//
// Thread-safe: the leader is updated from the campaign's thread while gRPC
// threads answer.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include "common/controller_targets.h"
#include "gantry/v1/replication.pb.h"

namespace gantry::replication {

class StandbyService final : public grpc::CallbackGenericService {
 public:
  explicit StandbyService(std::string self_name)
      : self_name_(std::move(self_name)) {}

  void SetLeader(const std::optional<v1::ControllerMember>& leader);
  // Why no leader is known (etcd unreachable, no quorum), for the answer.
  void SetTrouble(std::string trouble);

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override;

 private:
  const std::string self_name_;
  std::mutex mutex_;
  std::optional<v1::ControllerMember> leader_;  // guarded by mutex_
  std::string trouble_;                         // guarded by mutex_
};

}  // namespace gantry::replication
