// The group commit: jobs and nodes staged by key go out once per batch as
// they are when it leaves, actions run only once their batch is durable,
// and what is staged during a write goes out whole in the next batch.
#include "daemon/controller/core/commit_pipeline.h"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <catch2/catch.hpp>

namespace gantry {
namespace commit_pipeline_test {

// Keeps every batch it is given; a commit can be held back to stand for a
// slow disk.
class BatchLog final : public StateStore {
 public:
  absl::StatusOr<Snapshot> Load() override { return Snapshot(); }
  absl::Status Commit(const Batch& batch, bool /*sync*/) override {
    while (hold.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard lock(mutex);
    batches.push_back(batch);
    return absl::OkStatus();
  }
  absl::StatusOr<v1::JobEnvironment> Environment(uint64_t) override {
    return v1::JobEnvironment();
  }
  absl::StatusOr<std::vector<v1::EventRecord>> JobEvents(uint64_t) override {
    return std::vector<v1::EventRecord>();
  }
  size_t Count() {
    std::lock_guard lock(mutex);
    return batches.size();
  }

  std::atomic<bool> hold{false};
  std::mutex mutex;
  std::vector<Batch> batches;
};

// A loop, the records the pipeline copies from, and the pipeline.
struct Harness {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work = boost::asio::make_work_guard(io);
  BatchLog store;
  FakeClock clock;
  std::map<uint64_t, v1::JobRecord> jobs;
  std::map<std::string, v1::NodeRecord> nodes;
  std::vector<uint64_t> jobs_heard;
  std::vector<std::string> events_heard;
  CommitPipeline pipeline{
      io,
      store,
      clock,
      nullptr,
      {.find_job = [this](uint64_t id) -> const v1::JobRecord* {
         auto it = jobs.find(id);
         return it == jobs.end() ? nullptr : &it->second;
       },
       .find_node = [this](const std::string& name) -> const v1::NodeRecord* {
         auto it = nodes.find(name);
         return it == nodes.end() ? nullptr : &it->second;
       },
       .on_job_staged =
           [this](const v1::JobRecord& record) {
             jobs_heard.push_back(record.id());
           },
       .on_event_staged =
           [this](const v1::EventRecord& event) {
             events_heard.push_back(event.kind());
           }}};

  v1::JobRecord& Job(uint64_t id, const std::string& name) {
    v1::JobRecord& record = jobs[id];
    record.set_id(id);
    record.mutable_spec()->set_name(name);
    return record;
  }
  // Runs the loop until what is staged so far is durable.
  void RunUntilDurable() {
    bool durable = false;
    pipeline.AfterCommit([&] { durable = true; });
    while (!durable) io.run_one_for(std::chrono::milliseconds(50));
  }
};

TEST_CASE("a job staged many times goes out once, as it is when it leaves",
          "[commit_pipeline]") {
  Harness h;
  h.pipeline.StageJob(h.Job(1, "first"));
  h.pipeline.StageJob(h.Job(1, "second"));
  h.nodes["n1"].set_name("n1");
  h.pipeline.StageNode(h.nodes["n1"]);
  h.nodes["n1"].set_reason("changed after staging");
  h.RunUntilDurable();
  REQUIRE(h.store.batches.size() == 1);
  const StateStore::Batch& batch = h.store.batches[0];
  REQUIRE(batch.jobs.size() == 1);
  CHECK(batch.jobs[0].spec().name() == "second");
  REQUIRE(batch.nodes.size() == 1);
  CHECK(batch.nodes[0].reason() == "changed after staging");
  // Every staging is heard, however many go out.
  CHECK(h.jobs_heard == std::vector<uint64_t>{1, 1});
}

TEST_CASE("a job gone before its batch leaves is not written",
          "[commit_pipeline]") {
  Harness h;
  h.pipeline.StageJob(h.Job(1, "a"));
  h.pipeline.StageJob(h.Job(2, "b"));
  h.jobs.erase(1);
  h.RunUntilDurable();
  REQUIRE(h.store.batches[0].jobs.size() == 1);
  CHECK(h.store.batches[0].jobs[0].id() == 2);
}

TEST_CASE("actions run once their batch is durable, in order",
          "[commit_pipeline]") {
  Harness h;
  std::vector<int> ran;
  h.store.hold = true;
  h.pipeline.StageJob(h.Job(1, "a"));
  h.pipeline.AfterCommit([&] { ran.push_back(1); });
  // The flush is posted: the batch leaves after this turn, then waits on
  // the disk.
  h.io.poll();
  CHECK(ran.empty());
  // Staged during the write: the next batch, whole, after the first.
  h.pipeline.StageJob(h.Job(2, "b"));
  h.pipeline.StageEvent(2, "n1", "submitted", "");
  h.pipeline.AfterCommit([&] { ran.push_back(2); });
  h.io.poll();
  CHECK(ran.empty());
  auto unwritten = h.pipeline.Unwritten();
  REQUIRE(unwritten[0] != nullptr);  // in flight
  CHECK(unwritten[1]->events.size() == 1);
  h.store.hold = false;
  while (ran.size() < 2) h.io.run_one_for(std::chrono::milliseconds(50));
  CHECK(ran == std::vector<int>{1, 2});
  REQUIRE(h.store.batches.size() == 2);
  CHECK(h.store.batches[0].jobs.at(0).id() == 1);
  CHECK(h.store.batches[1].jobs.at(0).id() == 2);
  CHECK(h.store.batches[1].events.size() == 1);
}

TEST_CASE("an action with nothing staged runs without a write",
          "[commit_pipeline]") {
  Harness h;
  bool ran = false;
  h.pipeline.AfterCommit([&] { ran = true; });
  h.io.poll();
  CHECK(ran);
  CHECK(h.store.Count() == 0);
}

TEST_CASE("events are numbered on from the stored sequence",
          "[commit_pipeline]") {
  Harness h;
  h.clock.SetMs(1'000);
  h.pipeline.ResumeEventsAt(41);
  h.pipeline.StageEvent(7, "", "held", "by alice");
  h.pipeline.StageEvent(0, "n3", "node_down", "silent");
  h.RunUntilDurable();
  const StateStore::Batch& batch = h.store.batches[0];
  REQUIRE(batch.events.size() == 2);
  CHECK(batch.events[0].sequence() == 41);
  CHECK(batch.events[0].job_id() == 7);
  CHECK(batch.events[0].time_ms() == 1'000);
  CHECK(batch.events[1].sequence() == 42);
  CHECK(batch.events[1].node() == "n3");
  CHECK(batch.next_event_sequence == 43);
  CHECK(h.events_heard == std::vector<std::string>{"held", "node_down"});
}

}  // namespace commit_pipeline_test
}  // namespace gantry
