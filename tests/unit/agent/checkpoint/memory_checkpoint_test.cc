// In-memory checkpoints on the agent (agent/memory_checkpoint_*.h): what a
// snapshot may hold, where the store may live, the wire's lines, and two
// services on loopback pushing a replica and restoring it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "agent/checkpoint/memory_checkpoint_service.h"
#include "agent/checkpoint/memory_checkpoint_store.h"
#include "agent/checkpoint/memory_checkpoint_tree.h"
#include "agent/checkpoint/memory_checkpoint_wire.h"
#include "agent/preflight/preflight_listener.h"
#include "tests/unit/support/temp_dir.h"

namespace gantry::agent {
namespace memory_checkpoint_test {

using gantry::testing::TempDir;

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";

void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

absl::StatusOr<SnapshotListing> ListDirectory(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), kSnapshotDirectoryFlags));
  REQUIRE(fd.get() >= 0);
  return ListSnapshot(fd.get(), ::geteuid());
}

TEST_CASE("snapshot paths stay below their directory") {
  CHECK(CheckSnapshotPath("state.pt").ok());
  CHECK(CheckSnapshotPath("shard/00/weights.bin").ok());
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../../x", "a//b",
                          "a/./b", "a/", "new\nline"}) {
    INFO(bad);
    CHECK(absl::IsInvalidArgument(CheckSnapshotPath(bad)));
  }
  CHECK_FALSE(CheckSnapshotPath(std::string(600, 'a')).ok());
  std::string deep;
  for (int i = 0; i < 20; ++i) deep += "d/";
  CHECK_FALSE(CheckSnapshotPath(deep + "f").ok());
}

TEST_CASE("a snapshot with a link, a hard link or another's file is refused") {
  TempDir dir("memory-tree");
  WriteFile(dir.path + "/ok/state", "abc");
  WriteFile(dir.path + "/ok/sub/blob", "defg");
  absl::StatusOr<SnapshotListing> listed = ListDirectory(dir.path + "/ok");
  REQUIRE(listed.ok());
  CHECK(listed->bytes == 7);
  CHECK(listed->files.size() == 2);

  WriteFile(dir.path + "/link/state", "abc");
  ::symlink("/etc/shadow", (dir.path + "/link/shadow").c_str());
  CHECK(absl::IsFailedPrecondition(ListDirectory(dir.path + "/link").status()));

  WriteFile(dir.path + "/hard/state", "abc");
  ::link((dir.path + "/hard/state").c_str(),
         (dir.path + "/hard/again").c_str());
  CHECK(absl::IsFailedPrecondition(ListDirectory(dir.path + "/hard").status()));

  if (::geteuid() == 0) {
    WriteFile(dir.path + "/other/state", "abc");
    REQUIRE(::chown((dir.path + "/other/state").c_str(), 12345, 12345) == 0);
    CHECK(absl::IsFailedPrecondition(
        ListDirectory(dir.path + "/other").status()));
  }
}

TEST_CASE("the store refuses a directory others could swap") {
  TempDir dir("memory-root");
  CHECK(MemoryCheckpointStore::Open(dir.path + "/fine", 0).ok());
  CHECK(absl::IsInvalidArgument(
      MemoryCheckpointStore::Open("relative/dir", 0).status()));

  std::filesystem::create_directory(dir.path + "/open");
  ::chmod((dir.path + "/open").c_str(), 0777);
  CHECK(absl::IsFailedPrecondition(
      MemoryCheckpointStore::Open(dir.path + "/open/store", 0).status()));

  std::filesystem::create_directory(dir.path + "/target");
  ::symlink((dir.path + "/target").c_str(), (dir.path + "/planted").c_str());
  CHECK(absl::IsFailedPrecondition(
      MemoryCheckpointStore::Open(dir.path + "/planted", 0).status()));
}

TEST_CASE("the store lists complete snapshots only, newest two per rank") {
  TempDir dir("memory-held");
  auto store = MemoryCheckpointStore::Open(dir.path + "/store", 0);
  REQUIRE(store.ok());
  absl::StatusOr<std::string> rank_dir =
      (*store)->PrepareRankDirectory(7, 3, ::geteuid(), ::getegid());
  REQUIRE(rank_dir.ok());
  CHECK(*rank_dir == dir.path + "/store/job-7/rank-3");
  for (int step : {5, 10, 15}) {
    WriteFile(*rank_dir + "/step-" + std::to_string(step) + "/state", "x");
  }
  WriteFile(*rank_dir + "/.step-20.tmp/state", "partial");
  WriteFile(*rank_dir + "/step-x/state", "not a step");
  std::vector<v1::HeldMemoryCheckpoint> held = (*store)->Held();
  REQUIRE(held.size() == 2);
  CHECK(held[0].step() == 15);
  CHECK(held[1].step() == 10);
  CHECK_FALSE(held[0].replica());
  CHECK((*store)->Jobs() == std::vector<uint64_t>{7});
  CHECK((*store)->Drop(7).ok());
  CHECK((*store)->Held().empty());
  CHECK_FALSE(std::filesystem::exists(*rank_dir));
}

TEST_CASE("a replica above the job's limit is refused") {
  TempDir dir("memory-limit");
  auto store = MemoryCheckpointStore::Open(dir.path + "/store", 100);
  REQUIRE(store.ok());
  CHECK(
      absl::IsResourceExhausted((*store)->BeginReplica(7, 0, 1, 101).status()));
  absl::StatusOr<MemoryCheckpointStore::Incoming> fits =
      (*store)->BeginReplica(7, 0, 1, 100);
  REQUIRE(fits.ok());
  (*store)->Abandon(std::move(*fits));
  CHECK((*store)->Held().empty());
}

TEST_CASE("the wire's lines parse strictly and round-trip") {
  MemoryCheckpointRequest put{.kind = MemoryCheckpointRequest::Kind::kPut,
                              .token = kToken,
                              .job = 12,
                              .rank = 3,
                              .step = 400,
                              .files = 2,
                              .bytes = 1 << 20};
  absl::StatusOr<MemoryCheckpointRequest> parsed =
      ParseMemoryCheckpointRequest(FormatMemoryCheckpointRequest(put));
  REQUIRE(parsed.ok());
  CHECK(parsed->kind == put.kind);
  CHECK(parsed->job == 12);
  CHECK(parsed->bytes == put.bytes);
  const std::string token = kToken;
  for (const std::string& bad : std::vector<std::string>{
           "", "GMC1", "GPF1 " + token + " 5", "GMC1 GET " + token + " 1 2",
           "GMC1 GET " + token + " 1 2 -3", "GMC1 GET ABCDEF 1 2 3",
           "GMC1 GET " + token + " 1 2 3 4",
           "GMC1 PUT " + token + " 1 2 3 99999 5",
           "GMC1 GET " + token + " +1 2 3", "GMC1 DEL " + token + " 1 2 3"}) {
    INFO(bad);
    CHECK_FALSE(ParseMemoryCheckpointRequest(bad).ok());
  }
  CHECK(ParseGoAnswer("GO").ok());
  CHECK(ParseGoAnswer("GO 2 10")->bytes == 10);
  CHECK(
      absl::IsFailedPrecondition(ParseGoAnswer("NO over the limit").status()));
  CHECK_FALSE(ParseGoAnswer("GO x 1").ok());
  CHECK(ParseSnapshotFileLine("F 12 sub/a b")->path == "sub/a b");
  CHECK_FALSE(ParseSnapshotFileLine("F 12 ../a").ok());
  CHECK_FALSE(ParseSnapshotFileLine("F -1 a").ok());
}

// A node: its store, its service, and the listener that hands it
// connections.
struct Node {
  explicit Node(const std::string& root) {
    auto store = MemoryCheckpointStore::Open(root, 1 << 20);
    REQUIRE(store.ok());
    service = std::make_unique<MemoryCheckpointService>(
        std::move(*store),
        MemoryCheckpointServiceOptions{.poll_interval =
                                           std::chrono::milliseconds(50)},
        nullptr);
    auto started = PreflightListener::Start("127.0.0.1", 0);
    REQUIRE(started.ok());
    listener = std::move(*started);
    listener->AddProtocol("GMC1", [this](int fd, const std::string& line) {
      return service->Take(fd, line);
    });
  }
  ~Node() { listener.reset(); }
  v1::MemoryCheckpointPeer Peer() const {
    v1::MemoryCheckpointPeer peer;
    peer.set_address("127.0.0.1");
    peer.set_port(listener->port());
    return peer;
  }
  void Plan(uint64_t job, const Node* replicate_to) {
    v1::MemoryCheckpointPlan plan;
    plan.set_job_id(job);
    plan.set_token(kToken);
    if (replicate_to) *plan.mutable_replicate_to() = replicate_to->Peer();
    service->Plan(plan);
  }
  bool Holds(bool replica, int64_t step) {
    std::optional<v1::MemoryCheckpointReport> report = service->Report(true);
    for (const v1::HeldMemoryCheckpoint& held : report->held()) {
      if (held.replica() == replica && held.step() == step) return true;
    }
    return false;
  }
  std::unique_ptr<MemoryCheckpointService> service;
  std::unique_ptr<PreflightListener> listener;
};

bool Within(std::chrono::seconds limit, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

TEST_CASE("a snapshot goes to the peer and comes back byte for byte") {
  TempDir dir("memory-service");
  Node ran(dir.path + "/ran");
  Node peer(dir.path + "/peer");
  Node spare(dir.path + "/spare");
  ran.Plan(7, &peer);
  peer.Plan(7, nullptr);
  spare.Plan(7, nullptr);

  absl::StatusOr<std::string> rank_dir =
      ran.service->PrepareRankDirectory(7, 1, ::geteuid(), ::getegid());
  REQUIRE(rank_dir.ok());
  const std::string blob(300000, 'z');
  WriteFile(*rank_dir + "/.partial/state.pt", "step 4");
  WriteFile(*rank_dir + "/.partial/shard/blob", blob);
  std::filesystem::rename(*rank_dir + "/.partial", *rank_dir + "/step-4");
  REQUIRE(
      Within(std::chrono::seconds(10), [&] { return peer.Holds(true, 4); }));
  CHECK(ran.Holds(false, 4));

  // The rank's node is gone: the spare restores rank 1 from the peer.
  v1::LaunchRanks launch;
  launch.set_job_id(7);
  launch.add_ranks()->set_rank(1);
  v1::MemoryRestore& restore = *launch.mutable_memory_restore();
  restore.set_step(4);
  restore.set_token(kToken);
  v1::MemoryRestore::Source& source = *restore.add_sources();
  source.set_rank(1);
  *source.mutable_holder() = peer.Peer();
  REQUIRE(
      spare.service->PrepareRankDirectory(7, 1, ::geteuid(), ::getegid()).ok());
  REQUIRE(spare.service->Restore(launch).ok());
  const std::string restored = dir.path + "/spare/job-7/rank-1/step-4";
  CHECK(ReadFile(restored + "/state.pt") == "step 4");
  CHECK(ReadFile(restored + "/shard/blob") == blob);

  // Restored once per attempt: a later launch of it fetches nothing.
  REQUIRE(spare.service->Restore(launch).ok());

  // A wrong token gets nothing; a step nobody holds fails with the reason.
  launch.set_attempt(launch.attempt() + 1);
  restore.set_token("ffffffffffffffffffffffffffffffff");
  restore.set_step(5);
  absl::Status refused = spare.service->Restore(launch);
  CHECK_FALSE(refused.ok());
  restore.set_token(kToken);
  launch.set_attempt(launch.attempt() + 1);
  absl::Status missing = spare.service->Restore(launch);
  CHECK_FALSE(missing.ok());
  CHECK(std::string(missing.message()).find("rank 1") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path + "/spare/job-7/rank-1/step-5"));

  // The job ended: the peer drops its replicas.
  peer.service->Drop(7);
  CHECK(Within(std::chrono::seconds(5), [&] { return !peer.Holds(true, 4); }));
}

TEST_CASE("a peer that never answers does not hold the agent's stop") {
  TempDir dir("memory-frozen");
  // A port that takes connections (the kernel does) and never answers, as
  // a SIGSTOPped agent's.
  const int frozen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(frozen, reinterpret_cast<sockaddr*>(&address),
                 sizeof(address)) == 0);
  REQUIRE(::listen(frozen, 8) == 0);
  socklen_t length = sizeof(address);
  ::getsockname(frozen, reinterpret_cast<sockaddr*>(&address), &length);

  auto node = std::make_unique<Node>(dir.path + "/ran");
  v1::MemoryCheckpointPlan plan;
  plan.set_job_id(7);
  plan.set_token(kToken);
  plan.mutable_replicate_to()->set_address("127.0.0.1");
  plan.mutable_replicate_to()->set_port(ntohs(address.sin_port));
  node->service->Plan(plan);
  absl::StatusOr<std::string> rank_dir =
      node->service->PrepareRankDirectory(7, 0, ::geteuid(), ::getegid());
  REQUIRE(rank_dir.ok());
  WriteFile(*rank_dir + "/.partial/state", "x");
  std::filesystem::rename(*rank_dir + "/.partial", *rank_dir + "/step-1");
  // The push is under way, waiting for an answer that never comes.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto started = std::chrono::steady_clock::now();
  node.reset();
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
  ::close(frozen);
}

}  // namespace memory_checkpoint_test
}  // namespace gantry::agent
