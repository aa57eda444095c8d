// `gantry job ID` shows a job's history as of its record: while a change is
// still being written (the synced write is on the store's thread), the
// record in memory already has it, and so must the history, without
// listing an event twice once the write lands.
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "common/clock.h"
#include "daemon/controller/controller.h"
#include "daemon/store/state_store.h"
#include "tests/unit/support/memory_store.h"

namespace gantry {
namespace job_history_test {

// A store in memory whose writes wait while the gate is shut.
class GatedStore final : public MemoryStore {
 public:
  absl::Status Commit(const Batch& batch, bool sync) override {
    {
      std::unique_lock lock(gate_mutex_);
      gate_.wait(lock, [this] { return open_; });
    }
    return MemoryStore::Commit(batch, sync);
  }

  void SetOpen(bool open) {
    std::lock_guard lock(gate_mutex_);
    open_ = open;
    gate_.notify_all();
  }

 private:
  std::mutex gate_mutex_;
  std::condition_variable gate_;
  bool open_ = true;
};

std::vector<std::string> HistoryKinds(const v1::GetJobResponse& response) {
  std::vector<std::string> kinds;
  for (const v1::EventRecord& event : response.events()) {
    kinds.push_back(event.kind());
  }
  return kinds;
}

TEST_CASE("a job's history includes the change still being written",
          "[controller]") {
  boost::asio::io_context io;
  GatedStore store;
  FakeClock clock;
  Controller controller(io, store, clock, ControllerOptions());
  REQUIRE(controller.Start().ok());
  const Caller alice{.uid = 1000, .gid = 1000, .user = "alice"};

  v1::SubmitRequest submit;
  submit.mutable_spec()->set_script("#!/bin/sh\ntrue\n");
  submit.mutable_spec()->set_working_dir("/tmp");
  std::optional<absl::StatusOr<JobId>> submitted;
  controller.Submit(submit, alice,
                    [&](absl::StatusOr<JobId> id) { submitted = id; });
  while (!submitted) io.run_one();
  INFO(submitted->status().ToString());
  REQUIRE(submitted->ok());
  const uint64_t job_id = (*submitted)->value();

  // The hold's batch goes to the writer, which waits at the gate.
  store.SetOpen(false);
  v1::HoldRequest hold;
  hold.add_job_ids(job_id);
  bool held = false;
  controller.Hold(hold, alice, [&](const v1::HoldResponse&) { held = true; });
  io.poll();
  REQUIRE_FALSE(held);

  absl::StatusOr<v1::GetJobResponse> during =
      controller.GetJob(JobId(job_id), alice);
  REQUIRE(during.ok());
  CHECK(during->job().held());
  CHECK(HistoryKinds(*during) == std::vector<std::string>{"submitted", "held"});

  store.SetOpen(true);
  while (!held) io.run_one();
  absl::StatusOr<v1::GetJobResponse> after =
      controller.GetJob(JobId(job_id), alice);
  REQUIRE(after.ok());
  CHECK(HistoryKinds(*after) == std::vector<std::string>{"submitted", "held"});

  controller.Stop();
  io.poll();
}

}  // namespace job_history_test
}  // namespace gantry
