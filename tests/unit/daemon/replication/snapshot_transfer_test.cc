// A copy of a leader's RocksDB goes over gRPC to a standby's state dir and
// is installed; a wrong token, a copy short of the log's start and a
// leader that names a file outside the copy are refused, and leave nothing
// to install.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include <grpcpp/grpcpp.h>

#include "daemon/replication/snapshot_fetch.h"
#include "daemon/replication/snapshot_install.h"
#include "daemon/replication/snapshot_service.h"
#include "daemon/store/rocksdb_store.h"
#include "tests/unit/support/temp_dir.h"

namespace gantry::replication {
namespace snapshot_transfer_test {

namespace fs = std::filesystem;

using gantry::testing::TempDir;

// A server on a free loopback port for `service`, stopped at the end.
class Server {
 public:
  explicit Server(grpc::Service& service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
  }
  ~Server() { server_->Shutdown(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

SnapshotSource SourceAt(const std::string& address, const std::string& token) {
  return {.leader_address = address,
          .credentials = grpc::InsecureChannelCredentials(),
          .channel_args = {},
          .token = token,
          .requester = "standby"};
}

// A leader database with one job, holding the log up to entry 7.
std::unique_ptr<RocksDbStore> LeaderDb(const std::string& state_dir) {
  auto store = RocksDbStore::Open(state_dir + "/db");
  REQUIRE(store.ok());
  StateStore::Batch batch;
  v1::JobRecord job;
  job.set_id(12);
  job.mutable_spec()->set_name("train");
  batch.jobs.push_back(job);
  batch.next_job_id = 13;
  REQUIRE((*store)->Commit(batch, /*sync=*/true, 7).ok());
  return std::move(*store);
}

// A leader serving its copy (token "secret" unless told otherwise) and a
// standby's empty state dir.
struct LeaderAndStandby {
  explicit LeaderAndStandby(const std::string& token = "secret")
      : leader(LeaderDb(leader_dir.path)),
        service(*leader, leader_dir.path),
        server(service),
        paths(standby_dir.path) {
    service.SetToken(token);
  }
  TempDir leader_dir{"snapshot-leader"};
  TempDir standby_dir{"snapshot-standby"};
  std::unique_ptr<RocksDbStore> leader;
  SnapshotService service;
  Server server;
  const SnapshotPaths paths;
};

TEST_CASE("a standby installs the leader's copy and finds its jobs",
          "[snapshot]") {
  LeaderAndStandby pair;
  const SnapshotPaths& paths = pair.paths;
  absl::StatusOr<uint64_t> fetched =
      FetchSnapshot(SourceAt(pair.server.address(), "secret"), paths, 5);
  REQUIRE(fetched.ok());
  CHECK(*fetched == 7);
  // The leader's checkpoint is gone once sent.
  CHECK_FALSE(fs::exists(pair.leader_dir.path + "/snapshot-out"));

  absl::StatusOr<bool> installed = FinishSnapshotInstall(paths);
  REQUIRE(installed.ok());
  REQUIRE(*installed);
  auto copy = RocksDbStore::Open(paths.db);
  REQUIRE(copy.ok());
  absl::StatusOr<StateStore::Snapshot> state = (*copy)->Load();
  REQUIRE(state.ok());
  REQUIRE(state->jobs.size() == 1);
  CHECK(state->jobs[0].spec().name() == "train");
  CHECK(state->next_job_id == 13);
  CHECK(state->replication_index == 7);
}

TEST_CASE("a wrong token gets nothing", "[snapshot]") {
  // No token published yet: every request is refused.
  LeaderAndStandby pair(/*token=*/"");
  const SnapshotPaths& paths = pair.paths;
  const std::string address = pair.server.address();
  CHECK(FetchSnapshot(SourceAt(address, ""), paths, 0).status().code() ==
        absl::StatusCode::kPermissionDenied);
  pair.service.SetToken("secret");
  CHECK(FetchSnapshot(SourceAt(address, "guess"), paths, 0).status().code() ==
        absl::StatusCode::kPermissionDenied);
  CHECK_FALSE(fs::exists(paths.ready));
}

TEST_CASE("a copy short of the log's start is not installed", "[snapshot]") {
  LeaderAndStandby pair;
  const SnapshotPaths& paths = pair.paths;
  absl::StatusOr<uint64_t> fetched =
      FetchSnapshot(SourceAt(pair.server.address(), "secret"), paths, 8);
  CHECK(fetched.status().code() == absl::StatusCode::kDataLoss);
  CHECK_FALSE(fs::exists(paths.ready));
  REQUIRE(FinishSnapshotInstall(paths).ok());
  CHECK_FALSE(fs::exists(paths.db));
}

// A leader (or whoever answers in its place) that names a file outside
// the copy's directory.
class EscapingService final : public v1::ControllerPeerService::Service {
 public:
  grpc::Status FetchSnapshot(
      grpc::ServerContext*, const v1::FetchSnapshotRequest*,
      grpc::ServerWriter<v1::SnapshotChunk>* writer) override {
    v1::SnapshotChunk chunk;
    chunk.set_file("../escaped");
    chunk.set_file_size(4);
    chunk.set_data("evil");
    writer->Write(chunk);
    v1::SnapshotChunk done;
    done.set_done(true);
    done.set_files(1);
    writer->Write(done);
    return grpc::Status::OK;
  }
};

TEST_CASE("a file named outside the copy is refused", "[snapshot]") {
  TempDir standby_dir("snapshot-standby");
  EscapingService service;
  Server server(service);
  const SnapshotPaths paths(standby_dir.path);
  absl::StatusOr<uint64_t> fetched =
      FetchSnapshot(SourceAt(server.address(), "secret"), paths, 0);
  CHECK(fetched.status().code() == absl::StatusCode::kDataLoss);
  CHECK_FALSE(fs::exists(standby_dir.path + "/escaped"));
  CHECK_FALSE(fs::exists(paths.ready));
}

}  // namespace snapshot_transfer_test
}  // namespace gantry::replication
