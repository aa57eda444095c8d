#include "daemon/replication/replicated_controller.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "daemon/replication/controller_members.h"
#include "daemon/replication/snapshot_fetch.h"

namespace gantry::replication {
namespace {

// etcd gave no answer (no quorum, members down or cut off), as opposed to
// an answer that refuses.
bool IsEtcdSilence(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ReplicatedController>>
ReplicatedController::Create(ReplicationOptions options, RocksDbStore& local,
                             StepDown step_down) {
  if (options.replication_key.empty()) {
    return absl::InvalidArgumentError(
        "several controllers on etcd need --replication-key: the file of "
        "the cluster key that seals what they keep in etcd "
        "(docs/admin-guide.md \"High availability\")");
  }
  absl::StatusOr<std::unique_ptr<RecordSeal>> seal =
      RecordSeal::FromKeyFile(options.replication_key);
  if (!seal.ok()) return seal.status();
  absl::StatusOr<EtcdTransport> transport =
      EtcdTransportFor(options.etcd_endpoints, options.etcd_tls);
  if (!transport.ok()) return transport.status();
  absl::StatusOr<std::unique_ptr<EtcdClient>> etcd = EtcdClient::Create(
      options.etcd_endpoints, options.etcd_timeout, std::move(*transport));
  if (!etcd.ok()) return etcd.status();
  // Before anything is read or campaigned for: endpoints of two clusters
  // would each elect a leader.
  if (absl::Status one = (*etcd)->CheckOneCluster(); !one.ok()) return one;
  return std::unique_ptr<ReplicatedController>(
      new ReplicatedController(std::move(options), local, std::move(step_down),
                               std::move(*etcd), std::move(*seal)));
}

ReplicatedController::ReplicatedController(ReplicationOptions options,
                                           RocksDbStore& local,
                                           StepDown step_down,
                                           std::unique_ptr<EtcdClient> etcd,
                                           std::unique_ptr<RecordSeal> seal)
    : options_(std::move(options)),
      local_(local),
      step_down_(std::move(step_down)),
      etcd_(std::move(etcd)),
      seal_(std::move(seal)) {
  log_ = std::make_unique<ReplicationLog>(
      *etcd_, ReplicationKeys(options_.prefix), *seal_);
  v1::ControllerMember self;
  self.set_name(options_.name);
  self.set_address(options_.address);
  self.set_role("standby");
  leadership_ = std::make_unique<Leadership>(
      *etcd_, log_->keys(), *seal_, self, options_.lease_ttl_seconds,
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
  if (absl::Status sealed =
          AskUntilEtcdAnswers("the log's first record", standby,
                              [this] { return RefuseUnsealedLog(); });
      !sealed.ok()) {
    return sealed;
  }
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
  if (!last.ok() && IsEtcdSilence(last.status())) {
    // etcd went quiet just after the election: start over as a standby
    // (which waits for etcd) rather than exit.
    leadership_->Resign();
    step_down_(absl::StrCat("elected, but etcd stopped answering: ",
                            last.status().message()));
    return last.status();
  }
  if (!last.ok()) {
    leadership_->Resign();
    return absl::Status(last.status().code(),
                        absl::StrCat("elected, but cannot apply the log: ",
                                     last.status().message()));
  }
  if (absl::Status retired = RetireLegacySnapshotToken(); !retired.ok()) {
    leadership_->Resign();
    return retired;
  }
  if (absl::Status marked = MarkEmptyLogTruncated(*last); !marked.ok()) {
    leadership_->Resign();
    return marked;
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

absl::Status ReplicatedController::AskUntilEtcdAnswers(
    const char* what, StandbyService& standby,
    const std::function<absl::Status()>& ask) {
  bool told = false;
  while (true) {
    absl::Status answer = ask();
    if (!IsEtcdSilence(answer)) {
      if (told) standby.SetTrouble("");
      return answer;
    }
    if (!told) {
      log::Warn("etcd does not answer yet; waiting for it",
                {{"reading", what}, {"error", answer.ToString()}});
      told = true;
    }
    standby.SetTrouble(std::string(answer.message()));
    leadership_->CountWaitingRound();
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

absl::Status ReplicatedController::RefuseUnsealedLog() {
  // The first entry and the truncation mark tell: an upgraded cluster's
  // log starts with what the earlier version wrote.
  etcdserverpb::TxnRequest txn;
  etcdserverpb::RangeRequest& first =
      *txn.add_success()->mutable_request_range();
  first.set_key(keys().log_prefix());
  first.set_range_end(PrefixEnd(keys().log_prefix()));
  first.set_limit(1);
  txn.add_success()->mutable_request_range()->set_key(keys().truncated());
  absl::StatusOr<etcdserverpb::TxnResponse> read = etcd_->Txn(txn);
  if (!read.ok()) return read.status();
  for (const etcdserverpb::ResponseOp& op : read->responses()) {
    for (const mvccpb::KeyValue& kv : op.response_range().kvs()) {
      if (LooksSealed(kv.value())) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          "the log in etcd under ", keys().prefix(),
          " was written by an earlier gantryd, which did not seal it (",
          kv.key(),
          "); this version refuses every unsealed record. To upgrade: stop "
          "every controller; delete the old log with `etcdctl del --prefix ",
          keys().prefix(),
          "`; start first the controller that led last (its state is the "
          "newest) and, once it leads, the others: they copy its state "
          "(docs/admin-guide.md \"High availability\", upgrading)"));
    }
  }
  return absl::OkStatus();
}

absl::Status ReplicatedController::MarkEmptyLogTruncated(
    uint64_t applied_index) {
  if (applied_index == 0) return absl::OkStatus();
  // Empty: no entry from 1 on and no truncation mark (Read fails when
  // either exists without the other).
  absl::StatusOr<ReplicationLog::Page> page = log_->Read(1, 1);
  if (!page.ok() || !page->entries.empty() || page->more) {
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> marked =
      log_->Truncate(applied_index, leadership_->leader_revision());
  if (!marked.ok()) {
    return absl::Status(
        marked.status().code(),
        absl::StrCat("elected on an empty log, but cannot mark it truncated "
                     "through this controller's state: ",
                     marked.status().message()));
  }
  log::Info(
      "the log in etcd was empty: marked truncated through this "
      "controller's state, so that standbys behind it copy its state",
      {{"through", applied_index}});
  return absl::OkStatus();
}

absl::Status ReplicatedController::RetireLegacySnapshotToken() {
  // Fenced like an append: a deposed leader changes nothing.
  etcdserverpb::TxnRequest txn;
  CompareCreated(txn, keys().leader(), leadership_->leader_revision());
  txn.add_success()->mutable_request_delete_range()->set_key(
      keys().legacy_snapshot_token());
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_->Txn(txn);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat("elected, but cannot clean up etcd: ",
                                     response.status().message()));
  }
  if (!response->succeeded()) {
    return absl::FailedPreconditionError(
        "elected, but replaced before taking office");
  }
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
  etcdserverpb::RangeRequest read;
  read.set_key(keys().leader());
  absl::StatusOr<etcdserverpb::RangeResponse> leader_key = etcd_->Range(read);
  if (!leader_key.ok()) return leader_key.status();
  if (leader_key->kvs_size() == 0) {
    standby.SetLeader(std::nullopt);
    return absl::UnavailableError("no controller leads now");
  }
  // Only a record sealed by a controller is believed (and passed on to
  // the callers of this standby).
  absl::StatusOr<v1::ControllerMember> leader =
      OpenMember(*seal_, leader_key->kvs(0));
  if (!leader.ok()) {
    standby.SetLeader(std::nullopt);
    return leader.status();
  }
  // Callers of this standby meanwhile are sent to the leader.
  standby.SetLeader(*leader);
  absl::StatusOr<uint64_t> truncated = log_->TruncatedThrough();
  if (!truncated.ok()) return truncated.status();
  grpc::ChannelArguments args;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentialsFor(leader->address(), options_.peer_tls, args);
  if (!credentials.ok()) return credentials.status();
  log::Info("copying the leader's state",
            {{"leader", leader->name()},
             {"address", leader->address()},
             {"log_truncated_through", *truncated}});
  return FetchSnapshot({.leader_address = leader->address(),
                        .credentials = *credentials,
                        .channel_args = args,
                        .token = seal_->snapshot_token(),
                        .requester = options_.name},
                       paths, *truncated);
}

}  // namespace gantry::replication
