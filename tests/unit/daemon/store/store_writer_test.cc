// The StoreWriter: batches are written on its thread, in order, and their
// completions come back on the loop, only after the write returned.
#include "daemon/store/store_writer.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <catch2/catch.hpp>

namespace gantry {
namespace store_writer_test {

// Records what it is given; Commit can be held back to stand for a slow
// disk, and fails when told to.
class RecordingStore final : public StateStore {
 public:
  absl::StatusOr<Snapshot> Load() override { return Snapshot(); }
  absl::Status Commit(const Batch& batch, bool sync) override {
    while (hold.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard lock(mutex);
    committed_ids.push_back(batch.next_job_id.value_or(0));
    synced = synced && sync;
    commit_thread = std::this_thread::get_id();
    if (fail) return absl::UnavailableError("disk gone");
    return absl::OkStatus();
  }
  absl::StatusOr<v1::JobEnvironment> Environment(uint64_t) override {
    return v1::JobEnvironment();
  }
  absl::StatusOr<std::vector<v1::EventRecord>> JobEvents(uint64_t) override {
    return std::vector<v1::EventRecord>();
  }

  std::atomic<bool> hold{false};
  bool fail = false;
  std::mutex mutex;
  std::vector<uint64_t> committed_ids;
  bool synced = true;
  std::thread::id commit_thread;
};

// A loop and a writer on a recording store. The writer's completions are
// posted from its thread: the work guard keeps the loop from running out of
// work while it waits for them.
struct Harness {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work = boost::asio::make_work_guard(io);
  RecordingStore store;
};

StateStore::Batch BatchNumbered(uint64_t n) {
  StateStore::Batch batch;
  batch.next_job_id = n;
  return batch;
}

TEST_CASE("store writer commits off the loop and answers on it",
          "[store_writer]") {
  Harness h;
  auto& io = h.io;
  auto& store = h.store;
  StoreWriter writer(io, store);
  std::vector<uint64_t> done_order;
  std::thread::id done_thread;
  store.hold = true;
  writer.Commit(BatchNumbered(1), [&](absl::Status status, double seconds) {
    CHECK(status.ok());
    CHECK(seconds >= 0);
    done_order.push_back(1);
    done_thread = std::this_thread::get_id();
  });
  CHECK(writer.busy());
  // Held on the disk: nothing to answer yet.
  io.poll();
  CHECK(done_order.empty());
  store.hold = false;
  while (done_order.empty()) {
    io.run_one_for(std::chrono::milliseconds(100));
  }
  CHECK_FALSE(writer.busy());
  CHECK(done_thread == std::this_thread::get_id());
  CHECK(store.commit_thread != std::this_thread::get_id());
  writer.Commit(BatchNumbered(2),
                [&](absl::Status, double) { done_order.push_back(2); });
  while (done_order.size() < 2) {
    io.run_one_for(std::chrono::milliseconds(100));
  }
  CHECK(done_order == std::vector<uint64_t>{1, 2});
  std::lock_guard lock(store.mutex);
  CHECK(store.committed_ids == std::vector<uint64_t>{1, 2});
  CHECK(store.synced);
}

TEST_CASE("store writer reports a failed commit", "[store_writer]") {
  Harness h;
  auto& io = h.io;
  auto& store = h.store;
  store.fail = true;
  StoreWriter writer(io, store);
  std::optional<absl::Status> outcome;
  writer.Commit(BatchNumbered(7),
                [&](absl::Status status, double) { outcome = status; });
  while (!outcome) io.run_one_for(std::chrono::milliseconds(100));
  CHECK(outcome->code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("store writer finishes the batch in flight before it goes",
          "[store_writer]") {
  Harness h;
  auto& io = h.io;
  auto& store = h.store;
  {
    StoreWriter writer(io, store);
    writer.Commit(BatchNumbered(3), [](absl::Status, double) {});
  }
  std::lock_guard lock(store.mutex);
  CHECK(store.committed_ids == std::vector<uint64_t>{3});
}

}  // namespace store_writer_test
}  // namespace gantry
