#include "daemon/replication/etcd_client.h"

#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/log.h"

namespace gantry::replication {
namespace {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

// Worth asking another member: this one is down, cut off, or without a
// raft leader (what a minority member answers).
bool TryAnotherMember(const grpc::Status& status) {
  // A member without a quorum may also give up on the request itself and
  // answer with its own context's error, as UNKNOWN: that is no answer
  // either, and must read as one ("no quorum"), not as an etcd failure.
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         (status.error_code() == grpc::StatusCode::UNKNOWN &&
          absl::StrContains(status.error_message(), "deadline exceeded"));
}

absl::StatusOr<std::string> Endpoint(std::string endpoint) {
  for (const absl::string_view scheme : {"http://", "https://"}) {
    if (absl::StartsWith(endpoint, scheme)) {
      endpoint = endpoint.substr(scheme.size());
    }
  }
  const size_t colon = endpoint.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(endpoint.substr(colon + 1), &port) || port == 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("etcd endpoint \"", endpoint, "\" is not HOST:PORT"));
  }
  return endpoint;
}

}  // namespace

std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    if (static_cast<unsigned char>(prefix.back()) < 0xff) {
      prefix.back() = static_cast<char>(prefix.back() + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

void CompareCreated(etcdserverpb::TxnRequest& txn, const std::string& key,
                    int64_t revision) {
  etcdserverpb::Compare* compare = txn.add_compare();
  compare->set_key(key);
  compare->set_target(etcdserverpb::Compare::CREATE);
  compare->set_result(etcdserverpb::Compare::EQUAL);
  compare->set_create_revision(revision);
}

absl::StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Create(
    const std::vector<std::string>& endpoints,
    std::chrono::milliseconds call_timeout, EtcdTransport transport) {
  if (endpoints.empty()) {
    return absl::InvalidArgumentError("no etcd endpoint given");
  }
  std::vector<std::string> checked;
  for (const std::string& endpoint : endpoints) {
    absl::StatusOr<std::string> valid = Endpoint(endpoint);
    if (!valid.ok()) return valid.status();
    checked.push_back(*valid);
  }
  return std::unique_ptr<EtcdClient>(
      new EtcdClient(std::move(checked), call_timeout, std::move(transport)));
}

EtcdClient::EtcdClient(std::vector<std::string> endpoints,
                       std::chrono::milliseconds call_timeout,
                       EtcdTransport transport)
    : endpoints_(std::move(endpoints)),
      call_timeout_(call_timeout),
      transport_(std::move(transport)) {
  for (const std::string& endpoint : endpoints_) {
    grpc::ChannelArguments args;
    // etcd members come and go in a failover: redial quickly.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetMaxReceiveMessageSize(64 << 20);
    Member member;
    member.endpoint = endpoint;
    member.channel =
        grpc::CreateCustomChannel(endpoint, transport_.credentials, args);
    member.kv = etcdserverpb::KV::NewStub(member.channel);
    member.lease = etcdserverpb::Lease::NewStub(member.channel);
    member.watch = etcdserverpb::Watch::NewStub(member.channel);
    member.maintenance = etcdserverpb::Maintenance::NewStub(member.channel);
    members_.push_back(std::move(member));
  }
}

absl::Status EtcdClient::Call(
    const char* what,
    const std::function<grpc::Status(Member&, grpc::ClientContext&)>& call,
    const std::function<uint64_t()>& answered_cluster) {
  const auto deadline = std::chrono::system_clock::now() + call_timeout_;
  std::vector<std::string> errors;
  const size_t first = preferred_.load();
  // Round after round over the members until the deadline: a member that
  // just lost its raft leader answers again after an election.
  for (size_t attempt = 0;; ++attempt) {
    const size_t index = (first + attempt) % members_.size();
    Member& member = members_[index];
    grpc::ClientContext context;
    context.set_deadline(deadline);
    grpc::Status status = call(member, context);
    if (status.ok() && !FromOurCluster(member, answered_cluster())) {
      status =
          grpc::Status(grpc::StatusCode::UNAVAILABLE,
                       ForeignMessage(member.endpoint, answered_cluster()));
    }
    if (status.ok() || !TryAnotherMember(status)) {
      preferred_.store(index);
      return FromGrpc(status);
    }
    if (errors.size() < members_.size()) {
      errors.push_back(
          absl::StrCat(member.endpoint, ": ", status.error_message()));
    }
    if (std::chrono::system_clock::now() >= deadline) break;
    if ((attempt + 1) % members_.size() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return absl::UnavailableError(absl::StrCat(
      "etcd did not answer ", what, " within ", call_timeout_.count(),
      " ms (no quorum, or every member unreachable): ",
      absl::StrJoin(errors, "; "),
      transport_.tls ? ""
                     : " (if etcd speaks TLS, give --etcd-ca, --etcd-cert "
                       "and --etcd-key)"));
}

std::string EtcdClient::ForeignMessage(const std::string& endpoint,
                                       uint64_t cluster_id) const {
  return absl::StrFormat(
      "etcd member %s answers for etcd cluster %x, not for %x, the cluster "
      "of the other endpoints: its answers are ignored (a member "
      "reinstalled or started as a cluster of its own; fix etcd)",
      endpoint, cluster_id, cluster_id_.load());
}

bool EtcdClient::FromOurCluster(const Member& member, uint64_t cluster_id) {
  uint64_t expected = cluster_id_.load();
  if (expected == 0 && cluster_id != 0 &&
      cluster_id_.compare_exchange_strong(expected, cluster_id)) {
    log::Info("etcd cluster",
              {{"cluster_id", absl::StrFormat("%x", cluster_id)},
               {"endpoint", member.endpoint}});
    expected = cluster_id;
  }
  const bool ours = cluster_id == 0 || cluster_id == expected;
  MutexLock lock(foreign_mutex_);
  auto known = foreign_.find(member.endpoint);
  if (ours) {
    if (known != foreign_.end()) {
      foreign_.erase(known);
      log::Info("etcd member answers for the cluster again",
                {{"endpoint", member.endpoint}});
    }
    return true;
  }
  if (known == foreign_.end() || known->second != cluster_id) {
    foreign_[member.endpoint] = cluster_id;
    log::Error("ALARM: etcd member of another cluster",
               {{"endpoint", member.endpoint},
                {"error", ForeignMessage(member.endpoint, cluster_id)}});
  }
  return false;
}

std::vector<ForeignEtcdMember> EtcdClient::ForeignMembers() const {
  MutexLock lock(foreign_mutex_);
  std::vector<ForeignEtcdMember> members;
  for (const auto& [endpoint, cluster_id] : foreign_) {
    members.push_back({endpoint, cluster_id});
  }
  return members;
}

grpc::Status EtcdClient::AskStatus(Member& member,
                                   etcdserverpb::StatusResponse& response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + call_timeout_);
  etcdserverpb::StatusRequest request;
  return member.maintenance->Status(&context, request, &response);
}

absl::Status EtcdClient::CheckOneCluster() {
  std::map<uint64_t, std::vector<std::string>> by_cluster;
  std::vector<std::string> silent;
  for (Member& member : members_) {
    etcdserverpb::StatusResponse response;
    grpc::Status status = AskStatus(member, response);
    if (status.ok()) {
      by_cluster[response.header().cluster_id()].push_back(member.endpoint);
    } else {
      silent.push_back(
          absl::StrCat(member.endpoint, " (", status.error_message(), ")"));
    }
  }
  if (by_cluster.size() > 1) {
    std::vector<std::string> parts;
    for (const auto& [cluster_id, endpoints] : by_cluster) {
      parts.push_back(absl::StrFormat(
          "%s: cluster %x", absl::StrJoin(endpoints, ", "), cluster_id));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "the etcd endpoints are not one etcd cluster (",
        absl::StrJoin(parts, "; "),
        "): each would elect a leader of its own (split brain). Members "
        "started as clusters of their own (Debian's etcd-server makes a "
        "one-member cluster at install) must be stopped, their data dirs "
        "wiped, and started with one --initial-cluster, "
        "--initial-cluster-token and --initial-cluster-state new; "
        "`etcdctl endpoint status` must show one leader"));
  }
  if (!by_cluster.empty()) {
    cluster_id_.store(by_cluster.begin()->first);
    log::Info("etcd endpoints are one cluster",
              {{"cluster_id", absl::StrFormat("%x", by_cluster.begin()->first)},
               {"checked", absl::StrJoin(by_cluster.begin()->second, ",")},
               {"not_answering", absl::StrJoin(silent, "; ")}});
  } else {
    log::Warn(
        "no etcd member answered: their cluster id is checked when "
        "they do",
        {{"endpoints", absl::StrJoin(silent, "; ")},
         {"tls", transport_.tls ? "on" : "off"}});
  }
  return absl::OkStatus();
}

absl::StatusOr<etcdserverpb::RangeResponse> EtcdClient::Range(
    const etcdserverpb::RangeRequest& request) {
  etcdserverpb::RangeResponse response;
  absl::Status status = Call(
      "a read",
      [&](Member& member, grpc::ClientContext& context) {
        return member.kv->Range(&context, request, &response);
      },
      [&] { return response.header().cluster_id(); });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdClient::Txn(
    const etcdserverpb::TxnRequest& request) {
  etcdserverpb::TxnResponse response;
  absl::Status status = Call(
      "a transaction",
      [&](Member& member, grpc::ClientContext& context) {
        return member.kv->Txn(&context, request, &response);
      },
      [&] { return response.header().cluster_id(); });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<etcdserverpb::DeleteRangeResponse> EtcdClient::DeleteRange(
    const etcdserverpb::DeleteRangeRequest& request) {
  etcdserverpb::DeleteRangeResponse response;
  absl::Status status = Call(
      "a delete",
      [&](Member& member, grpc::ClientContext& context) {
        return member.kv->DeleteRange(&context, request, &response);
      },
      [&] { return response.header().cluster_id(); });
  if (!status.ok()) return status;
  return response;
}

absl::Status EtcdClient::Compact(int64_t revision) {
  etcdserverpb::CompactionRequest request;
  request.set_revision(revision);
  etcdserverpb::CompactionResponse response;
  return Call(
      "a compaction",
      [&](Member& member, grpc::ClientContext& context) {
        return member.kv->Compact(&context, request, &response);
      },
      [&] { return response.header().cluster_id(); });
}

absl::StatusOr<int64_t> EtcdClient::GrantLease(int64_t ttl_seconds) {
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(ttl_seconds);
  etcdserverpb::LeaseGrantResponse response;
  absl::Status status = Call(
      "a lease grant",
      [&](Member& member, grpc::ClientContext& context) {
        return member.lease->LeaseGrant(&context, request, &response);
      },
      [&] { return response.header().cluster_id(); });
  if (!status.ok()) return status;
  if (!response.error().empty()) {
    return absl::UnavailableError(
        absl::StrCat("etcd refused a lease: ", response.error()));
  }
  return response.id();
}

absl::StatusOr<int64_t> EtcdClient::KeepAliveOnce(int64_t lease_id) {
  etcdserverpb::LeaseKeepAliveResponse response;
  bool answered = false;
  absl::Status status = Call(
      "a lease renewal",
      [&](Member& member, grpc::ClientContext& context) {
        auto stream = member.lease->LeaseKeepAlive(&context);
        etcdserverpb::LeaseKeepAliveRequest request;
        request.set_id(lease_id);
        answered = stream->Write(request) && stream->Read(&response);
        stream->WritesDone();
        context.TryCancel();
        grpc::Status finished = stream->Finish();
        if (answered) return grpc::Status::OK;
        return finished.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                            "the keep-alive stream closed")
                             : finished;
      },
      [&] { return response.header().cluster_id(); });
  if (!status.ok()) return status;
  return response.ttl();
}

absl::Status EtcdClient::RevokeLease(int64_t lease_id) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease_id);
  etcdserverpb::LeaseRevokeResponse response;
  return Call(
      "a lease revocation",
      [&](Member& member, grpc::ClientContext& context) {
        return member.lease->LeaseRevoke(&context, request, &response);
      },
      [&] { return response.header().cluster_id(); });
}

std::vector<EtcdMemberHealth> EtcdClient::Health() {
  std::vector<EtcdMemberHealth> health;
  for (Member& member : members_) {
    EtcdMemberHealth one;
    one.endpoint = member.endpoint;
    etcdserverpb::StatusResponse response;
    grpc::Status status = AskStatus(member, response);
    if (status.ok() &&
        !FromOurCluster(member, response.header().cluster_id())) {
      one.error = absl::StrCat(
          "ALARM: ",
          ForeignMessage(member.endpoint, response.header().cluster_id()));
    } else if (status.ok()) {
      one.reachable = true;
      one.is_leader = response.leader() != 0 &&
                      response.leader() == response.header().member_id();
      one.raft_term = response.raftterm();
      one.db_size_bytes = response.dbsize();
      if (response.leader() == 0) one.error = "no raft leader";
      for (const std::string& error : response.errors()) {
        one.error += (one.error.empty() ? "" : "; ") + error;
      }
    } else {
      one.error = status.error_message();
    }
    health.push_back(std::move(one));
  }
  return health;
}

std::unique_ptr<EtcdWatch> EtcdClient::NewWatch(std::string key,
                                                std::string range_end,
                                                int64_t start_revision) {
  return std::unique_ptr<EtcdWatch>(new EtcdWatch(
      *this, std::move(key), std::move(range_end), start_revision));
}

absl::Status EtcdWatch::Run(const OnEvents& on_events) {
  EtcdClient::Member& member =
      client_.members_[client_.preferred_.load() % client_.members_.size()];
  grpc::ClientContext context;
  {
    MutexLock lock(mutex_);
    if (cancelled_) return absl::OkStatus();
    context_ = &context;
  }
  auto stream = member.watch->Watch(&context);
  etcdserverpb::WatchRequest request;
  etcdserverpb::WatchCreateRequest* create = request.mutable_create_request();
  create->set_key(key_);
  create->set_range_end(range_end_);
  create->set_start_revision(start_revision_);
  absl::Status result = absl::OkStatus();
  if (stream->Write(request)) {
    etcdserverpb::WatchResponse response;
    while (stream->Read(&response)) {
      if (!client_.FromOurCluster(member, response.header().cluster_id())) {
        result = absl::UnavailableError(client_.ForeignMessage(
            member.endpoint, response.header().cluster_id()));
        client_.preferred_.store(client_.preferred_.load() + 1);
        break;
      }
      if (response.compact_revision() > 0) {
        result = absl::OutOfRangeError(absl::StrCat(
            "etcd compacted revisions up to ", response.compact_revision(),
            ", past the watch's start ", start_revision_));
        break;
      }
      if (response.canceled()) {
        result = absl::UnavailableError(absl::StrCat(
            "etcd cancelled the watch: ", response.cancel_reason()));
        break;
      }
      if (response.events_size() > 0) on_events(response);
    }
  }
  context.TryCancel();
  grpc::Status finished = stream->Finish();
  bool cancelled;
  {
    MutexLock lock(mutex_);
    context_ = nullptr;
    cancelled = cancelled_;
  }
  if (cancelled) return absl::OkStatus();
  if (!result.ok()) return result;
  // The member went away: let the next watch start at another one.
  client_.preferred_.store(client_.preferred_.load() + 1);
  return absl::UnavailableError(
      absl::StrCat("the etcd watch on ", member.endpoint,
                   " ended: ", finished.error_message()));
}

void EtcdWatch::Cancel() {
  MutexLock lock(mutex_);
  cancelled_ = true;
  if (context_) context_->TryCancel();
}

}  // namespace gantry::replication
