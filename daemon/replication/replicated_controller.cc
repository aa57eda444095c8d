#include "daemon/replication/replicated_controller.h"

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "daemon/replication/snapshot_fetch.h"

namespace gantry::replication {

absl::StatusOr<std::unique_ptr<ReplicatedController>>
ReplicatedController::Create(ReplicationOptions options, RocksDbStore& local,
                             StepDown step_down) {
  absl::StatusOr<EtcdTransport> transport =
      EtcdTransportFor(options.etcd_endpoints, options.etcd_tls);
  if (!transport.ok()) return transport.status();
  absl::StatusOr<std::unique_ptr<EtcdClient>> etcd = EtcdClient::Create(
      options.etcd_endpoints, options.etcd_timeout, std::move(*transport));
  if (!etcd.ok()) return etcd.status();
  // Before anything is read or campaigned for: endpoints of two clusters
  // would each elect a leader.
  if (absl::Status one = (*etcd)->CheckOneCluster(); !one.ok()) return one;
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
  // A standby behind the log's truncation could not lead (its state would
  // have a hole): it copies the leader's state before it campaigns. Other
  // errors are the follower's to retry.
  if (absl::StatusOr<uint64_t> caught_up = follower_->CatchUp();
      !caught_up.ok() && IsBehindTruncation(caught_up.status())) {
    log::Warn("this controller is behind the log in etcd",
              {{"error", caught_up.status().ToString()}});
    return CopyLeaderStateAndRestart(standby);
  }
  std::thread following(
      [this] { follower_->Run([this] { leadership_->Stop(); }); });
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
  if (follower_->behind_truncation()) {
    if (campaign.ok()) leadership_->Resign();
    return CopyLeaderStateAndRestart(standby);
  }
  if (!campaign.ok()) return campaign;
  // Elected: the old leader can append no more, so the log as it is now is
  // everything it ever acknowledged.
  absl::StatusOr<uint64_t> last = follower_->CatchUp();
  if (!last.ok() && IsBehindTruncation(last.status())) {
    leadership_->Resign();
    return CopyLeaderStateAndRestart(standby);
  }
  if (!last.ok()) {
    leadership_->Resign();
    return absl::Status(last.status().code(),
                        absl::StrCat("elected, but cannot apply the log: ",
                                     last.status().message()));
  }
  if (absl::Status published = PublishSnapshotToken(); !published.ok()) {
    leadership_->Resign();
    return published;
  }
  log::Info("elected leader",
            {{"applied_index", *last},
             {"leader_revision", leadership_->leader_revision()}});
  store_ = std::make_unique<ReplicatedStore>(
      local_, *log_, *leadership_, *last + 1,
      [this](const std::string& reason) { step_down_(reason); });
  truncator_ = std::make_unique<LogTruncator>(
      *etcd_, *log_,
      LogTruncator::Options{.self_name = options_.name,
                            .retain = options_.log_retain,
                            .interval = options_.truncate_interval},
      [this] { return store_->last_index(); }, leadership_->leader_revision());
  truncator_->Start();
  return absl::OkStatus();
}

absl::Status ReplicatedController::PublishSnapshotToken() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof(bytes))) {
    return absl::UnavailableError("cannot read /dev/urandom");
  }
  std::string token;
  for (unsigned char byte : bytes) {
    absl::StrAppend(&token, absl::Hex(byte, absl::kZeroPad2));
  }
  // Fenced like an append: a deposed leader cannot replace the token.
  etcdserverpb::TxnRequest txn;
  CompareCreated(txn, keys().leader(), leadership_->leader_revision());
  etcdserverpb::PutRequest& put = *txn.add_success()->mutable_request_put();
  put.set_key(keys().snapshot_token());
  put.set_value(token);
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_->Txn(txn);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat("elected, but cannot publish the "
                                     "snapshot token in etcd: ",
                                     response.status().message()));
  }
  if (!response->succeeded()) {
    return absl::FailedPreconditionError(
        "elected, but replaced before publishing the snapshot token");
  }
  snapshot_token_ = std::move(token);
  return absl::OkStatus();
}

absl::Status ReplicatedController::CopyLeaderStateAndRestart(
    StandbyService& standby) {
  const SnapshotPaths paths(options_.state_dir);
  std::string last_problem;
  while (true) {
    absl::StatusOr<uint64_t> fetched = FetchFromLeader(paths, standby);
    if (fetched.ok()) break;
    // Said once per kind of trouble; the copy is tried until it works (a
    // standby without it can do nothing else useful).
    if (fetched.status().ToString() != last_problem) {
      log::Warn("cannot copy the leader's state yet; retrying",
                {{"error", fetched.status().ToString()}});
      last_problem = fetched.status().ToString();
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  CrashPoint("gantryd.snapshot.after_ready_before_install");
  step_down_("installing a copy of the leader's state");
  return absl::InternalError("gantryd did not restart to install the copy");
}

absl::StatusOr<uint64_t> ReplicatedController::FetchFromLeader(
    const SnapshotPaths& paths, StandbyService& standby) {
  etcdserverpb::TxnRequest txn;
  txn.add_success()->mutable_request_range()->set_key(keys().leader());
  txn.add_success()->mutable_request_range()->set_key(keys().snapshot_token());
  txn.add_success()->mutable_request_range()->set_key(keys().truncated());
  absl::StatusOr<etcdserverpb::TxnResponse> read = etcd_->Txn(txn);
  if (!read.ok()) return read.status();
  const auto value = [&](int i) -> std::optional<std::string> {
    const etcdserverpb::RangeResponse& range =
        read->responses(i).response_range();
    if (range.kvs_size() == 0) return std::nullopt;
    return range.kvs(0).value();
  };
  v1::ControllerMember leader;
  const std::optional<std::string> leader_value = value(0);
  if (!leader_value || !leader.ParseFromString(*leader_value)) {
    standby.SetLeader(std::nullopt);
    return absl::UnavailableError("no controller leads now");
  }
  // Callers of this standby meanwhile are sent to the leader.
  standby.SetLeader(leader);
  const std::optional<std::string> token = value(1);
  if (!token) {
    return absl::UnavailableError("the leader has published no snapshot token");
  }
  uint64_t truncated = 0;
  if (const std::optional<std::string> mark = value(2);
      mark && !absl::SimpleAtoi(*mark, &truncated)) {
    return absl::DataLossError(
        "the log's truncation mark in etcd is not a number");
  }
  grpc::ChannelArguments args;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentialsFor(leader.address(), options_.peer_tls, args);
  if (!credentials.ok()) return credentials.status();
  log::Info("copying the leader's state",
            {{"leader", leader.name()},
             {"address", leader.address()},
             {"log_truncated_through", truncated}});
  return FetchSnapshot({.leader_address = leader.address(),
                        .credentials = *credentials,
                        .channel_args = args,
                        .token = *token,
                        .requester = options_.name},
                       paths, truncated);
}

}  // namespace gantry::replication
