#include "daemon/replication/replicated_controller.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"

namespace gantry::replication {

absl::StatusOr<std::unique_ptr<ReplicatedController>>
ReplicatedController::Create(ReplicationOptions options, RocksDbStore& local,
                             StepDown step_down) {
  absl::StatusOr<std::unique_ptr<EtcdClient>> etcd =
      EtcdClient::Create(options.etcd_endpoints, options.etcd_timeout);
  if (!etcd.ok()) return etcd.status();
  return std::unique_ptr<ReplicatedController>(new ReplicatedController(
      std::move(options), local, std::move(step_down), std::move(*etcd)));
}

ReplicatedController::ReplicatedController(ReplicationOptions options,
                                           RocksDbStore& local,
                                           StepDown step_down,
                                           std::unique_ptr<EtcdClient> etcd)
    : options_(std::move(options)),
      local_(local),
      step_down_(std::move(step_down)),
      etcd_(std::move(etcd)) {
  log_ = std::make_unique<ReplicationLog>(*etcd_,
                                          ReplicationKeys(options_.prefix));
  v1::ControllerMember self;
  self.set_name(options_.name);
  self.set_address(options_.address);
  self.set_role("standby");
  leadership_ = std::make_unique<Leadership>(
      *etcd_, log_->keys(), self, options_.lease_ttl_seconds,
      [this](const std::string& reason) { step_down_(reason); });
  follower_ = std::make_unique<LogFollower>(
      *etcd_, *log_, local_,
      [this](uint64_t index) { leadership_->SetAppliedIndex(index); });
}

ReplicatedController::~ReplicatedController() {
  if (follower_) follower_->Stop();
  if (leadership_) leadership_->Stop();
}

absl::Status ReplicatedController::WaitUntilLeader(StandbyService& standby) {
  absl::StatusOr<uint64_t> local_index = local_.ReplicationIndex();
  if (!local_index.ok()) return local_index.status();
  leadership_->SetAppliedIndex(*local_index);
  std::thread following([this] { follower_->Run(); });
  log::Info("standing by: following the log in etcd",
            {{"applied_index", *local_index},
             {"etcd", absl::StrJoin(etcd_->endpoints(), ",")}});
  absl::Status campaign = leadership_->Campaign(
      [&](const std::optional<v1::ControllerMember>& leader) {
        standby.SetLeader(leader);
        if (leader) {
          log::Info(
              "the leader is another controller",
              {{"leader", leader->name()}, {"address", leader->address()}});
        }
      },
      [&](const std::string& trouble) { standby.SetTrouble(trouble); });
  follower_->Stop();
  following.join();
  if (!campaign.ok()) return campaign;
  // Elected: the old leader can append no more, so the log as it is now is
  // everything it ever acknowledged.
  absl::StatusOr<uint64_t> last = follower_->CatchUp();
  if (!last.ok()) {
    leadership_->Resign();
    return absl::Status(last.status().code(),
                        absl::StrCat("elected, but cannot apply the log: ",
                                     last.status().message()));
  }
  log::Info("elected leader",
            {{"applied_index", *last},
             {"leader_revision", leadership_->leader_revision()}});
  store_ = std::make_unique<ReplicatedStore>(
      local_, *log_, *leadership_, *last + 1,
      [this](const std::string& reason) { step_down_(reason); });
  return absl::OkStatus();
}

}  // namespace gantry::replication
