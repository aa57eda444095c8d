// Durable cluster state: jobs, nodes, the event log and counters, and the
// history of jobs that left the controller's live state.
//
// The controller is the only writer. A Batch collects the mutations of one
// event-loop turn and Commit writes them atomically, with the write-ahead log
// synced when asked, so one fsync covers every submission of that turn
// (group commit). The controller commits from its StoreWriter's thread, one
// batch at a time, and reads (JobEvents) from its loop thread meanwhile:
// implementations must allow a read during a commit. Reads that grow with
// the history (ReadHistory, IndexOlderHistory) run on the controller's
// history thread (daemon/controller/history_worker.h), beside both.
#pragma once

#include <cstdint>
#include <memory>
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

  // Ids of history records whose job ended before `ended_before_ms`,
  // oldest end first, at most `limit` of them. Reads the expiry index
  // (daemon/store/history_index.h), never the records, so a call costs
  // `limit` keys however big the history is. Records stored before the
  // index existed are found once IndexOlderHistory has reached them.
  // Errors: UNAVAILABLE with the database's message.
  virtual absl::StatusOr<std::vector<uint64_t>> ExpiredHistory(
      int64_t /*ended_before_ms*/, size_t /*limit*/) {
    return std::vector<uint64_t>();
  }

  // Adds to the expiry index at most `limit_records` records (or about
  // `limit_bytes` of them) that a gantryd from before the index stored;
  // true once none is left. Reads whole records, writes beside the
  // commits (the index is local bookkeeping, derived from the history
  // every replica holds): call it off the controller's loop. Errors:
  // UNAVAILABLE with the database's message.
  virtual absl::StatusOr<bool> IndexOlderHistory(size_t /*limit_records*/,
                                                 size_t /*limit_bytes*/) {
    return true;
  }

  // The history as of one moment (a database snapshot), read one record
  // at a time in id order, for a query that runs off the controller's
  // loop: its memory is one record, whatever the history holds.
  // Not thread-safe: one thread at a time.
  class HistoryCursor {
   public:
    struct Entry {
      uint64_t id = 0;
      size_t bytes = 0;  // the stored record's size
      // Absent when the cursor was told to pass over other users' records
      // and this is one (it was not parsed).
      std::optional<v1::JobRecord> record;
    };
    virtual ~HistoryCursor() = default;
    // The next record; nullopt past the last. Errors: DATA_LOSS for a
    // record that does not parse, UNAVAILABLE with the database's message.
    virtual absl::StatusOr<std::optional<Entry>> Next() = 0;
  };
  // A cursor from `first_id` up. With `only_uid`, records of other users
  // come back without their contents. Stores that keep no history
  // (unit-test stores) return an empty one.
  virtual std::unique_ptr<HistoryCursor> ReadHistory(
      uint64_t /*first_id*/, std::optional<uint32_t> /*only_uid*/) {
    class Empty final : public HistoryCursor {
     public:
      absl::StatusOr<std::optional<Entry>> Next() override {
        return std::optional<Entry>();
      }
    };
    return std::make_unique<Empty>();
  }
};

}  // namespace gantry
