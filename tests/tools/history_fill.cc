// gantry-history-fill: writes finished job records straight into the
// history of a gantryd --state-dir (gantryd must not be running: it
// holds the database's lock), as if that many jobs had run and left the
// live state. For tests/bench/history_bench.py; never for a real cluster.
//
//   gantry-history-fill STATE_DIR COUNT [USER]
//
// The jobs get the ids after the store's next job id, and the store's next
// job id moves past them. Prints the first and last id.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/store/rocksdb_store.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::cerr << "usage: gantry-history-fill STATE_DIR COUNT [USER]\n";
    return 2;
  }
  const uint64_t count = std::stoull(argv[2]);
  const std::string user = argc == 4 ? argv[3] : "bench";
  std::filesystem::create_directories(argv[1]);
  absl::StatusOr<std::unique_ptr<gantry::RocksDbStore>> store =
      gantry::RocksDbStore::Open(std::string(argv[1]) + "/db");  // as gantryd
  if (!store.ok()) {
    std::cerr << "gantry-history-fill: " << store.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<gantry::StateStore::Snapshot> snapshot = (*store)->Load();
  if (!snapshot.ok()) {
    std::cerr << "gantry-history-fill: " << snapshot.status().message() << "\n";
    return 1;
  }
  const uint64_t first = snapshot->next_job_id;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  constexpr uint64_t kPerBatch = 10'000;
  uint64_t next_sequence = snapshot->next_event_sequence;
  for (uint64_t done = 0; done < count;) {
    gantry::StateStore::Batch batch;
    for (uint64_t i = 0; i < kPerBatch && done < count; ++i, ++done) {
      const uint64_t id = first + done;
      gantry::v1::JobRecord& job = batch.retired.emplace_back();
      job.set_id(id);
      job.set_user(user);
      job.set_uid(1000);
      job.set_gid(1000);
      job.set_state(gantry::v1::COMPLETED);
      job.set_reason("None");
      // Ended an hour ago, a minute each: inside any retention.
      job.set_submit_time_ms(now - 3'600'000 - 60'000);
      job.set_start_time_ms(now - 3'600'000 - 60'000);
      job.set_end_time_ms(now - 3'600'000);
      job.set_attempt(1);
      job.set_output_path(absl::StrCat("/home/", user, "/gantry-", id, ".out"));
      gantry::v1::JobSpec& spec = *job.mutable_spec();
      spec.set_name(absl::StrCat("sweep-", id % 100));
      spec.set_nodes(1);
      spec.set_ntasks_per_node(1);
      spec.set_cpus_per_task(1);
      spec.set_partition("main");
      spec.set_working_dir(absl::StrCat("/home/", user));
      spec.set_script("#!/bin/bash\npython train.py --lr 0.01\n");
      spec.add_script_args(absl::StrCat("--seed=", id));
      gantry::v1::NodeAllocation& share = *job.add_allocation();
      share.set_node("node01");
      share.set_cpus(1);
      share.set_rank_count(1);
      for (const char* kind : {"submitted", "started", "completed"}) {
        gantry::v1::EventRecord& event = batch.events.emplace_back();
        event.set_sequence(next_sequence++);
        event.set_time_ms(now - 3'600'000);
        event.set_job_id(id);
        event.set_kind(kind);
      }
    }
    batch.next_job_id = first + done;
    batch.next_event_sequence = next_sequence;
    if (absl::Status status = (*store)->Commit(batch, /*sync=*/false);
        !status.ok()) {
      std::cerr << "gantry-history-fill: " << status.message() << "\n";
      return 1;
    }
  }
  // As a gantryd that ran for long would have it: in table files, not in
  // a log its next start replays.
  if (absl::Status status = (*store)->TEST_FlushAll(); !status.ok()) {
    std::cerr << "gantry-history-fill: " << status.message() << "\n";
    return 1;
  }
  std::cout << first << " " << first + count - 1 << "\n";
  return 0;
}
