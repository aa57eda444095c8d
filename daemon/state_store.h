// Durable cluster state: jobs, nodes, the event log and counters.
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
    bool empty() const {
      return jobs.empty() && nodes.empty() && events.empty() &&
             environments.empty() && !next_job_id && !next_event_sequence &&
             !cluster_id && !topology;
    }
  };

  struct Snapshot {
    std::vector<v1::JobRecord> jobs;  // in id order
    std::vector<v1::NodeRecord> nodes;
    uint64_t next_job_id = 1;
    uint64_t next_event_sequence = 1;
    // Random, chosen at the first start; 0 until then. Spreads rendezvous
    // ports of different clusters that share hosts (see ChooseMasterPort).
    uint64_t cluster_id = 0;
    std::optional<v1::TopologyRecord> topology;
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
};

}  // namespace gantry
