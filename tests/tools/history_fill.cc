// gantry-history-fill: writes finished job records straight into the
// history of a gantryd --state-dir (gantryd must not be running: it
// holds the database's lock), as if that many jobs had run and left the
// live state. For tests/bench/history_bench.py; never for a real cluster.
//
//   gantry-history-fill STATE_DIR COUNT [USER] [--uid UID] [--arg-bytes N]
//                       [--ended-ago SECONDS] [--without-index]
//
// The jobs get the ids after the store's next job id, and the store's next
// job id moves past them; each ended SECONDS ago (default 3600), a minute
// after it started, and carries one script argument of N bytes (default:
// a short one) that does not compress, as a user's payloads would not.
// They belong to USER (default "bench") with --uid (default 1000).
// --without-index leaves the history as a gantryd from before the expiry
// index wrote it (tests of the upgrade). Prints the first and last id.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/store/rocksdb_store.h"

namespace {

constexpr char kUsage[] =
    "usage: gantry-history-fill STATE_DIR COUNT [USER] [--uid UID] "
    "[--arg-bytes N] "
    "[--ended-ago SECONDS] [--without-index]\n";

// Letters from a fixed-seed generator (sixteen of them, four bits each,
// per draw): the same every run, and next to incompressible for RocksDB.
std::string Payload(size_t bytes, std::mt19937_64& random) {
  std::string payload(bytes, 'a');
  uint64_t bits = 0;
  for (size_t i = 0; i < bytes; ++i) {
    if (i % 16 == 0) bits = random();
    payload[i] = static_cast<char>('a' + (bits & 15));
    bits >>= 4;
  }
  return payload;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  size_t arg_bytes = 0;
  int64_t ended_ago_ms = 3'600'000;
  bool without_index = false;
  uint32_t uid = 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--uid" && i + 1 < argc) {
      uid = static_cast<uint32_t>(std::stoul(argv[++i]));
    } else if (arg == "--arg-bytes" && i + 1 < argc) {
      arg_bytes = std::stoull(argv[++i]);
    } else if (arg == "--ended-ago" && i + 1 < argc) {
      ended_ago_ms = std::stoll(argv[++i]) * 1000;
    } else if (arg == "--without-index") {
      without_index = true;
    } else if (arg.starts_with("--")) {
      std::cerr << kUsage;
      return 2;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() < 2 || positional.size() > 3) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string state_dir = positional[0];
  const uint64_t count = std::stoull(positional[1]);
  const std::string user = positional.size() == 3 ? positional[2] : "bench";
  std::filesystem::create_directories(state_dir);
  absl::StatusOr<std::unique_ptr<gantry::RocksDbStore>> store =
      gantry::RocksDbStore::Open(state_dir + "/db");  // as gantryd
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
  constexpr size_t kBatchBytes = 64 << 20;
  std::mt19937_64 random(first);
  const int64_t ended = now - ended_ago_ms;
  uint64_t next_sequence = snapshot->next_event_sequence;
  for (uint64_t done = 0; done < count;) {
    gantry::StateStore::Batch batch;
    size_t batch_bytes = 0;
    for (uint64_t i = 0;
         i < kPerBatch && batch_bytes < kBatchBytes && done < count;
         ++i, ++done) {
      const uint64_t id = first + done;
      gantry::v1::JobRecord& job = batch.retired.emplace_back();
      job.set_id(id);
      job.set_user(user);
      job.set_uid(uid);
      job.set_gid(uid);
      job.set_state(gantry::v1::COMPLETED);
      job.set_reason("None");
      // A minute each.
      job.set_submit_time_ms(ended - 60'000);
      job.set_start_time_ms(ended - 60'000);
      job.set_end_time_ms(ended);
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
      if (arg_bytes > 0) spec.add_script_args(Payload(arg_bytes, random));
      batch_bytes += arg_bytes;
      gantry::v1::NodeAllocation& share = *job.add_allocation();
      share.set_node("node01");
      share.set_cpus(1);
      share.set_rank_count(1);
      for (const char* kind : {"submitted", "started", "completed"}) {
        gantry::v1::EventRecord& event = batch.events.emplace_back();
        event.set_sequence(next_sequence++);
        event.set_time_ms(ended);
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
  // After the flush: the dropped families are not to be touched again.
  if (without_index) {
    if (absl::Status status = (*store)->TEST_DropHistoryIndex(); !status.ok()) {
      std::cerr << "gantry-history-fill: " << status.message() << "\n";
      return 1;
    }
  }
  std::cout << first << " " << first + count - 1 << "\n";
  return 0;
}
