// Durable cluster state: jobs, nodes, the event log and counters, and the
// history of jobs that left the controller's live state.
//
// The controller is the only writer. A Batch collects the mutations of one
// event-loop turn and Commit writes them atomically, with the write-ahead log
// synced when asked, so one fsync covers every submission of that turn
// (group commit). The controller commits from its StoreWriter's thread, one
// batch at a time, and reads (JobEvents) from its loop thread meanwhile:
// implementations must allow a read during a commit.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

class StateStore {
 public:
  struct Batch {
    std::vector<v1::JobRecord> jobs;    // upserted by id
    std::vector<v1::NodeRecord> nodes;  // upserted by name
    std::vector<v1::EventRecord> events;
    // Submit environments by environment id (the job's id, or its
    // array's); written once, at submission.
    std::vector<std::pair<uint64_t, v1::JobEnvironment>> environments;
    std::optional<uint64_t> next_job_id;
    std::optional<uint64_t> next_event_sequence;
    std::optional<uint64_t> cluster_id;
    std::optional<v1::TopologyRecord> topology;
    // Finished jobs leaving the live state (--min-job-age): moved from the
    // jobs to the history, after the upserts above, so a job staged and
    // retired in one batch ends up in the history only.
    std::vector<v1::JobRecord> retired;
    // History records past their retention: deleted with their events.
    std::vector<uint64_t> expired;
    // The fair-share usage of every retired job, as of this batch.
    std::optional<v1::FairShareRecord> retired_usage;
    // A replicated controller (daemon/replication): the index of the log
    // entry this batch is, written with it so that the database says
    // exactly which entries it holds. Not part of empty(): it is
    // bookkeeping, never a change on its own.
    std::optional<uint64_t> replication_index;
    bool empty() const {
      return jobs.empty() && nodes.empty() && events.empty() &&
             environments.empty() && !next_job_id && !next_event_sequence &&
             !cluster_id && !topology && retired.empty() && expired.empty() &&
             !retired_usage;
    }
  };

  // The live state; the history is read on demand, so loading does not
  // grow with it.
  struct Snapshot {
    std::vector<v1::JobRecord> jobs;  // in id order
    std::vector<v1::NodeRecord> nodes;
    uint64_t next_job_id = 1;
    uint64_t next_event_sequence = 1;
    // Random, chosen at the first start; 0 until then. Spreads rendezvous
    // ports of different clusters that share hosts (see ChooseMasterPort).
    uint64_t cluster_id = 0;
    std::optional<v1::TopologyRecord> topology;
    std::optional<v1::FairShareRecord> retired_usage;
    // The last replicated log entry applied (0: none; see Batch).
    uint64_t replication_index = 0;
  };

  virtual ~StateStore() = default;

  // Reads everything. Errors: DATA_LOSS for a record that does not parse
  // (the store is corrupt: refuse to run rather than forget jobs).
  virtual absl::StatusOr<Snapshot> Load() = 0;

  // Writes the batch atomically; with `sync` it is on stable storage when
  // this returns. Errors: UNAVAILABLE with the database's message.
  virtual absl::Status Commit(const Batch& batch, bool sync) = 0;

  // The environment stored under `environment_id` (see Batch), read when
  // a job launches; Load does not read environments. An empty one when
  // none is stored (a job that exported nothing). Errors: DATA_LOSS for a
  // record that does not parse, UNAVAILABLE with the database's message.
  virtual absl::StatusOr<v1::JobEnvironment> Environment(
      uint64_t environment_id) = 0;

  // Events of one job, in order (for `gantry job ID` history).
  virtual absl::StatusOr<std::vector<v1::EventRecord>> JobEvents(
      uint64_t job_id) = 0;

  // History records with ids from `first_id` up, in id order, at most
  // `limit` of them. Stores that keep no history (unit-test stores) have
  // none. Errors: DATA_LOSS for a record that does not parse, UNAVAILABLE
  // with the database's message.
  virtual absl::StatusOr<std::vector<v1::JobRecord>> HistoryJobs(
      uint64_t /*first_id*/, size_t /*limit*/) {
    return std::vector<v1::JobRecord>();
  }

  struct HistoryExpiry {
    std::vector<uint64_t> expired;
    uint64_t first_kept = 0;  // the first scanned record not expired; 0: none
  };
  // Ids of history records whose job ended before `ended_before_ms`, among
  // the first `scan_limit` records from `first_id` up in id order (the
  // oldest, nearly: ids are handed out in submission order), so one call
  // costs a bounded read. Callers pass the id after the last one they
  // expired, so the scan does not wade through the deleted ones.
  virtual absl::StatusOr<HistoryExpiry> ExpiredHistory(
      uint64_t /*first_id*/, int64_t /*ended_before_ms*/,
      size_t /*scan_limit*/) {
    return HistoryExpiry();
  }
};

}  // namespace gantry
