// The log and the election against a real etcd (Debian's etcd-server),
// started by the test on free ports in a temp dir; skipped where etcd is
// not installed.
#include "daemon/replication/replication_log.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "daemon/replication/controller_members.h"
#include "daemon/replication/leadership.h"
#include "daemon/replication/log_truncator.h"
#include "tests/unit/support/skip.h"

namespace gantry::replication {
namespace replication_log_test {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

// One etcd member in a temp dir; stopped (by pid) and removed at the end.
class EtcdProcess {
 public:
  EtcdProcess() {
    dir_ = std::filesystem::temp_directory_path() /
           ("gantry-etcd-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    const std::string client =
        "http://127.0.0.1:" + std::to_string(client_port_ = FreePort());
    const std::string peer = "http://127.0.0.1:" + std::to_string(FreePort());
    const std::string data = (dir_ / "data").string();
    const std::string log = (dir_ / "etcd.log").string();
    pid_ = fork();
    if (pid_ == 0) {
      FILE* out = freopen(log.c_str(), "w", stdout);
      (void)out;
      dup2(fileno(stdout), STDERR_FILENO);
      execlp("etcd", "etcd", "--name", "t1", "--data-dir", data.c_str(),
             "--listen-client-urls", client.c_str(), "--advertise-client-urls",
             client.c_str(), "--listen-peer-urls", peer.c_str(),
             "--initial-advertise-peer-urls", peer.c_str(), "--initial-cluster",
             ("t1=" + peer).c_str(), nullptr);
      _exit(127);
    }
  }
  ~EtcdProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string endpoint() const {
    return "127.0.0.1:" + std::to_string(client_port_);
  }

 private:
  std::filesystem::path dir_;
  int client_port_ = 0;
  pid_t pid_ = -1;
};

bool EtcdInstalled() { return std::system("command -v etcd >/dev/null") == 0; }

// A client whose first calls wait for etcd to come up.
std::unique_ptr<EtcdClient> Connect(const EtcdProcess& etcd) {
  auto client =
      *EtcdClient::Create({etcd.endpoint()}, std::chrono::milliseconds(2000));
  for (int i = 0; i < 100; ++i) {
    etcdserverpb::RangeRequest probe;
    probe.set_key("probe");
    if (client->Range(probe).ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return client;
}

constexpr char kClusterKey[] = "0123456789abcdef0123456789abcdef";

v1::ControllerMember Member(const std::string& name) {
  v1::ControllerMember member;
  member.set_name(name);
  member.set_address(name + ":6817");
  return member;
}

std::string BatchBytes(uint64_t job_id, size_t padding = 0) {
  v1::ReplicatedBatch batch;
  v1::JobRecord* job = batch.add_jobs();
  job->set_id(job_id);
  job->mutable_spec()->set_script(std::string(padding, 'x'));
  return batch.SerializeAsString();
}

TEST_CASE(
    "Only the leader appends, retries are idempotent, big batches go in "
    "parts") {
  if (!EtcdInstalled()) GANTRY_SKIP("etcd is not installed (etcd-server)");
  EtcdProcess etcd;
  std::unique_ptr<EtcdClient> client = Connect(etcd);
  const ReplicationKeys keys("/test/");
  RecordSeal seal(kClusterKey);
  ReplicationLog log(*client, keys, seal, /*max_value_bytes=*/1000);
  Leadership first(*client, keys, seal, Member("a"), 2,
                   [](const std::string&) {});
  REQUIRE(first.Campaign([](const auto&) {}, [](const std::string&) {}).ok());
  REQUIRE(first.Valid());
  const int64_t revision = first.leader_revision();

  REQUIRE(log.Append(1, BatchBytes(1), revision).ok());
  // The same entry again (a retry after a lost answer) is accepted...
  REQUIRE(log.Append(1, BatchBytes(1), revision).ok());
  // ...another batch under the same index is not.
  CHECK(log.Append(1, BatchBytes(2), revision).code() ==
        absl::StatusCode::kFailedPrecondition);
  // A batch of 2.5 KB in parts of 1,000 bytes reads back whole.
  REQUIRE(log.Append(2, BatchBytes(2, 2500), revision).ok());

  absl::StatusOr<ReplicationLog::Page> page = log.Read(1, 10);
  REQUIRE(page.ok());
  REQUIRE(page->entries.size() == 2);
  CHECK(page->entries[0].batch.jobs(0).id() == 1);
  CHECK(page->entries[1].batch.jobs(0).spec().script().size() == 2500);
  CHECK_FALSE(page->more);

  // A deposed leader (its lease ended) cannot append, whatever it thinks.
  first.Resign();
  CHECK(log.Append(3, BatchBytes(3), revision).code() ==
        absl::StatusCode::kFailedPrecondition);
  Leadership second(*client, keys, seal, Member("b"), 2,
                    [](const std::string&) {});
  REQUIRE(second.Campaign([](const auto&) {}, [](const std::string&) {}).ok());
  CHECK(log.Append(3, BatchBytes(3), revision).code() ==
        absl::StatusCode::kFailedPrecondition);
  REQUIRE(log.Append(3, BatchBytes(3), second.leader_revision()).ok());
  page = log.Read(3, 10);
  REQUIRE(page.ok());
  REQUIRE(page->entries.size() == 1);
  CHECK(page->entries[0].batch.jobs(0).id() == 3);
}

TEST_CASE(
    "A standby wins once the leader's lease expires, and reports the leader "
    "meanwhile") {
  if (!EtcdInstalled()) GANTRY_SKIP("etcd is not installed (etcd-server)");
  EtcdProcess etcd;
  std::unique_ptr<EtcdClient> client = Connect(etcd);
  const ReplicationKeys keys("/test/");
  RecordSeal seal(kClusterKey);
  auto leader = std::make_unique<Leadership>(*client, keys, seal, Member("a"),
                                             2, [](const std::string&) {});
  REQUIRE(leader->Campaign([](const auto&) {}, [](const std::string&) {}).ok());
  Leadership standby(*client, keys, seal, Member("b"), 2,
                     [](const std::string&) {});
  std::string seen;
  std::thread campaign([&] {
    CHECK(standby
              .Campaign(
                  [&](const std::optional<v1::ControllerMember>& member) {
                    if (member && seen.empty()) seen = member->address();
                  },
                  [](const std::string&) {})
              .ok());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK_FALSE(standby.is_leader());
  // The leader dies without resigning: its renewals stop.
  const auto died = std::chrono::steady_clock::now();
  leader->Stop();
  leader.reset();
  campaign.join();
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - died)
          .count();
  CHECK(seen == "a:6817");
  CHECK(standby.is_leader());
  CHECK(took < 6.0);
}

TEST_CASE(
    "Truncation deletes entries and their parts, a reader behind it is told, "
    "and only the leader truncates") {
  if (!EtcdInstalled()) GANTRY_SKIP("etcd is not installed (etcd-server)");
  EtcdProcess etcd;
  std::unique_ptr<EtcdClient> client = Connect(etcd);
  const ReplicationKeys keys("/test/");
  RecordSeal seal(kClusterKey);
  ReplicationLog log(*client, keys, seal, /*max_value_bytes=*/1000);
  Leadership leader(*client, keys, seal, Member("a"), 2,
                    [](const std::string&) {});
  REQUIRE(leader.Campaign([](const auto&) {}, [](const std::string&) {}).ok());
  const int64_t revision = leader.leader_revision();
  for (uint64_t i = 1; i <= 5; ++i) {
    REQUIRE(log.Append(i, BatchBytes(i, i == 3 ? 2500 : 0), revision).ok());
  }
  absl::StatusOr<int64_t> truncated = log.Truncate(3, revision);
  REQUIRE(truncated.ok());
  CHECK(*log.TruncatedThrough() == 3);
  for (uint64_t first : {1, 3}) {
    absl::StatusOr<ReplicationLog::Page> behind = log.Read(first, 10);
    CHECK(IsBehindTruncation(behind.status()));
  }
  absl::StatusOr<ReplicationLog::Page> page = log.Read(4, 10);
  REQUIRE(page.ok());
  REQUIRE(page->entries.size() == 2);
  CHECK(page->entries[0].index == 4);
  // Entry 3's parts went with it.
  etcdserverpb::RangeRequest parts;
  parts.set_key(keys.chunks_begin());
  parts.set_range_end(PrefixEnd(keys.chunks_begin()));
  CHECK(client->Range(parts)->kvs_size() == 0);
  // etcd can forget the deleted entries' history.
  CHECK(client->Compact(*truncated).ok());
  REQUIRE(log.Read(4, 10).ok());

  leader.Resign();
  CHECK(log.Truncate(4, revision).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(*log.TruncatedThrough() == 3);
}

TEST_CASE(
    "The leader's truncator keeps the log until a standby holds it, then "
    "truncates behind it") {
  if (!EtcdInstalled()) GANTRY_SKIP("etcd is not installed (etcd-server)");
  EtcdProcess etcd;
  std::unique_ptr<EtcdClient> client = Connect(etcd);
  const ReplicationKeys keys("/test/");
  RecordSeal seal(kClusterKey);
  ReplicationLog log(*client, keys, seal);
  Leadership leader(*client, keys, seal, Member("a"), 2,
                    [](const std::string&) {});
  REQUIRE(leader.Campaign([](const auto&) {}, [](const std::string&) {}).ok());
  for (uint64_t i = 1; i <= 10; ++i) {
    REQUIRE(log.Append(i, BatchBytes(i), leader.leader_revision()).ok());
  }
  LogTruncator truncator(
      *client, log, {.self_name = "a", .retain = 2, .interval = {}},
      [] { return uint64_t{10}; }, leader.leader_revision());
  // Alone: the log is the only copy outside the leader.
  REQUIRE(truncator.Pass().ok());
  CHECK(truncator.truncated_through() == 0);
  // A standby that applied up to entry 7.
  v1::ControllerMember standby = Member("b");
  standby.set_applied_index(7);
  etcdserverpb::PutRequest put;
  put.set_key(keys.member("b"));
  put.set_value(SealMember(seal, keys.member("b"), standby));
  etcdserverpb::TxnRequest txn;
  *txn.add_success()->mutable_request_put() = put;
  REQUIRE(client->Txn(txn).ok());
  REQUIRE(truncator.Pass().ok());
  CHECK(truncator.truncated_through() == 5);
  CHECK(IsBehindTruncation(log.Read(5, 10).status()));
  REQUIRE(log.Read(6, 10).ok());
  // The next pass compacts etcd's history of what this one deleted.
  REQUIRE(truncator.Pass().ok());
  CHECK(truncator.truncated_through() == 5);
}

// Puts `value` under `key` as anyone with write access to etcd could.
void PutRaw(EtcdClient& client, const std::string& key,
            const std::string& value) {
  etcdserverpb::TxnRequest txn;
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
  REQUIRE(client.Txn(txn).ok());
}

std::string GetRaw(EtcdClient& client, const std::string& key) {
  etcdserverpb::RangeRequest get;
  get.set_key(key);
  absl::StatusOr<etcdserverpb::RangeResponse> got = client.Range(get);
  REQUIRE(got.ok());
  return got->kvs_size() == 1 ? got->kvs(0).value() : "";
}

TEST_CASE(
    "Forged, altered and replayed log entries are refused, never applied, "
    "and the leader replaces a forged entry where it appends") {
  if (!EtcdInstalled()) GANTRY_SKIP("etcd is not installed (etcd-server)");
  EtcdProcess etcd;
  std::unique_ptr<EtcdClient> client = Connect(etcd);
  const ReplicationKeys keys("/test/");
  RecordSeal seal(kClusterKey);
  ReplicationLog log(*client, keys, seal, /*max_value_bytes=*/1000);
  Leadership leader(*client, keys, seal, Member("a"), 2,
                    [](const std::string&) {});
  REQUIRE(leader.Campaign([](const auto&) {}, [](const std::string&) {}).ok());
  const int64_t revision = leader.leader_revision();
  REQUIRE(log.Append(1, BatchBytes(1), revision).ok());
  REQUIRE(log.Append(2, BatchBytes(2, 2500), revision).ok());  // in parts
  // Nothing of a batch reads in clear in etcd.
  CHECK(GetRaw(*client, keys.log(1)).find(BatchBytes(1)) == std::string::npos);

  // An attacker appends entry 3 in clear, as gantryd used to write it.
  v1::LogEntry forged;
  forged.set_batch(BatchBytes(666));
  forged.set_batch_bytes(forged.batch().size());
  PutRaw(*client, keys.log(3), forged.SerializeAsString());
  // ... and replays entry 1's sealed value at index 4.
  PutRaw(*client, keys.log(4), GetRaw(*client, keys.log(1)));
  absl::StatusOr<ReplicationLog::Page> page = log.Read(1, 10);
  REQUIRE(page.ok());
  CHECK(page->entries.size() == 2);  // stops before the forgery
  CHECK_FALSE(page->more);
  CHECK(seal.forged_count() >= 1);
  CHECK(seal.last_forged_key() == keys.log(3));
  page = log.Read(4, 10);
  REQUIRE(page.ok());
  CHECK(page->entries.empty());  // the replay does not open at index 4
  CHECK(seal.last_forged_key() == keys.log(4));

  // The leader appends its own entry 3 over the forgery (created by
  // someone else, never overwritten: no controller wrote it)...
  REQUIRE(log.Append(3, BatchBytes(3), revision).ok());
  page = log.Read(3, 1);
  REQUIRE(page.ok());
  REQUIRE(page->entries.size() == 1);
  CHECK(page->entries[0].batch.jobs(0).id() == 3);

  // ... but an entry a controller wrote and someone then altered stops
  // the leader: followers may hold the real one.
  PutRaw(*client, keys.log(4), "");  // (make index 4 look altered)
  PutRaw(*client, keys.log(4), forged.SerializeAsString());
  CHECK(log.Append(4, BatchBytes(4), revision).code() ==
        absl::StatusCode::kFailedPrecondition);

  // A part of a chunked entry altered: the entry does not open.
  PutRaw(*client, keys.chunk(2, 0), std::string(1000, 'y'));
  page = log.Read(2, 1);
  REQUIRE(page.ok());
  CHECK(page->entries.empty());
  CHECK(seal.last_forged_key() == keys.chunk_prefix(2));

  // A forged truncation mark is refused too: it counts as no mark, so
  // readers are not stopped by it (entry 1 is no "truncated" entry)...
  const uint64_t forged_before = seal.forged_count();
  PutRaw(*client, keys.truncated(), "2");
  absl::StatusOr<uint64_t> mark = log.TruncatedThrough();
  REQUIRE(mark.ok());
  CHECK(*mark == 0);
  CHECK(seal.forged_count() == forged_before + 1);
  CHECK(seal.last_forged_key() == keys.truncated());
  page = log.Read(1, 1);
  REQUIRE(page.ok());
  CHECK(page->entries.size() == 1);
  // ... and the leader's next truncation puts a sealed one over it.
  REQUIRE(log.Truncate(1, revision).ok());
  mark = log.TruncatedThrough();
  REQUIRE(mark.ok());
  CHECK(*mark == 1);
}

TEST_CASE(
    "A forged leader record is neither believed nor passed on, and does not "
    "block the election") {
  if (!EtcdInstalled()) GANTRY_SKIP("etcd is not installed (etcd-server)");
  EtcdProcess etcd;
  std::unique_ptr<EtcdClient> client = Connect(etcd);
  const ReplicationKeys keys("/test/");
  RecordSeal seal(kClusterKey);
  // The attacker's own record, with no lease: it would never expire.
  v1::ControllerMember evil = Member("evil");
  PutRaw(*client, keys.leader(), evil.SerializeAsString());
  Leadership standby(*client, keys, seal, Member("b"), 2,
                     [](const std::string&) {});
  std::vector<std::string> told;
  REQUIRE(standby
              .Campaign(
                  [&](const std::optional<v1::ControllerMember>& leader) {
                    if (leader) told.push_back(leader->address());
                  },
                  [](const std::string&) {})
              .ok());
  CHECK(standby.is_leader());
  CHECK(told.empty());
  CHECK(seal.forged_count() == 1);
  CHECK(seal.last_forged_key() == keys.leader());
}

}  // namespace replication_log_test
}  // namespace gantry::replication
