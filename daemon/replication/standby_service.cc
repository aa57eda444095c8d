#include "daemon/replication/standby_service.h"

#include "absl/strings/str_cat.h"

namespace gantry::replication {
namespace {

// Answers at once and deletes itself when gRPC is done with it.
class Refusal final : public grpc::ServerGenericBidiReactor {
 public:
  explicit Refusal(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

// The service one server holds: every call gets the standby's answer.
class StandbyEndpoint final : public grpc::CallbackGenericService {
 public:
  explicit StandbyEndpoint(StandbyService& standby) : standby_(standby) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    return new Refusal(standby_.Answer(context));
  }

 private:
  StandbyService& standby_;
};

}  // namespace

void StandbyService::SetLeader(
    const std::optional<v1::ControllerMember>& leader) {
  MutexLock lock(mutex_);
  leader_ = leader;
  if (leader) trouble_.clear();
}

void StandbyService::SetTrouble(std::string trouble) {
  MutexLock lock(mutex_);
  trouble_ = std::move(trouble);
}

std::unique_ptr<grpc::CallbackGenericService> StandbyService::NewEndpoint() {
  return std::make_unique<StandbyEndpoint>(*this);
}

grpc::Status StandbyService::Answer(
    grpc::GenericCallbackServerContext* context) {
  std::string message;
  {
    MutexLock lock(mutex_);
    if (leader_ && !leader_->address().empty()) {
      context->AddTrailingMetadata(kLeaderMetadataKey, leader_->address());
      message =
          absl::StrCat("gantryd ", self_name_, " is a standby; the leader is ",
                       leader_->name(), " at ", leader_->address());
    } else {
      message =
          absl::StrCat("gantryd ", self_name_,
                       " is a standby and no controller leads at the moment",
                       trouble_.empty() ? " (an election is under way)"
                                        : absl::StrCat(" (", trouble_, ")"));
    }
  }
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, message);
}

}  // namespace gantry::replication
