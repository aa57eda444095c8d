// Where a node keeps jobs' in-memory checkpoints ([agent]
// memory-checkpoint-dir, on tmpfs):
//   ROOT/job-J/rank-R/step-S/...   rank R's own snapshots, written by the
//                                  rank (GANTRY_MEMORY_CHECKPOINT_DIR is
//                                  ROOT/job-J/rank-R); rank-R is the job
//                                  user's, mode 0700; job-J is the agent's
//   ROOT/replicas/job-J/rank-R/step-S/...
//                                  copies pushed here by the node that ran
//                                  rank R (the agent's alone, mode 0700)
// A snapshot is complete once its directory is named step-S (S a decimal
// number): a rank writes step-S.tmp (any other name) and renames it. A
// restored snapshot is assembled in ROOT/job-J/.restore-R-S, handed to the
// user and renamed into the rank's directory, so the rank never sees half
// of one.
//
// ROOT must be the agent's own directory and writable by no one else: on a
// shared tmpfs such as /dev/shm another user could otherwise plant it (or a
// link in its place) before the agent starts.
//
// Thread-safe: every function works by path and descriptor on what it is
// given; concurrent receives of one step are kept apart by unique names.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/checkpoint/memory_checkpoint_tree.h"
#include "agent/system/scoped_fd.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

// Snapshots kept per rank: the newest and the one before (the newest may
// be a step another rank has not reached yet).
inline constexpr size_t kSnapshotsKeptPerRank = 2;

class MemoryCheckpointStore {
 public:
  // Creates `root` when missing (mode 0755) and checks it as said above.
  // `job_limit_bytes`: the most one job's replicas may take here.
  static absl::StatusOr<std::unique_ptr<MemoryCheckpointStore>> Open(
      const std::string& root, uint64_t job_limit_bytes);

  const std::string& root() const { return root_; }
  uint64_t job_limit_bytes() const { return job_limit_bytes_; }

  // ROOT/job-J/rank-R, created for uid:gid when missing (the ranks of a
  // restarted job find theirs again).
  absl::StatusOr<std::string> PrepareRankDirectory(uint64_t job, uint32_t rank,
                                                   uid_t uid, gid_t gid);

  // The complete snapshots held, the newest kSnapshotsKeptPerRank per rank
  // of each kind, and their sizes. A snapshot that cannot be listed (as
  // ListSnapshot refuses it) is left out, and said why in `refused`.
  std::vector<v1::HeldMemoryCheckpoint> Held(
      std::vector<std::string>* refused = nullptr) const;

  // A complete snapshot opened for copying: the rank's own when it is here,
  // else this node's replica of it.
  struct OpenStep {
    ScopedFd dir;
    uid_t owner = 0;
    SnapshotListing listing;
  };
  // NOT_FOUND when neither is here; what ListSnapshot returns for one that
  // may not be copied.
  absl::StatusOr<OpenStep> OpenSnapshot(uint64_t job, uint32_t rank,
                                        int64_t step) const;
  // Only the rank's own snapshot (what replication sends).
  absl::StatusOr<OpenStep> OpenOwnSnapshot(uint64_t job, uint32_t rank,
                                           int64_t step) const;

  // An empty directory for a snapshot being received; Commit or Abandon it.
  struct Incoming {
    ScopedFd dir;
    std::string parent;  // where it is renamed into
    std::string name;    // its temporary name in `parent`
    uint64_t job = 0;
    uint32_t rank = 0;
    int64_t step = 0;
    bool replica = false;
  };
  // For a replica pushed here: RESOURCE_EXHAUSTED when `bytes` with the
  // job's newest replicas of its other ranks passes the job's limit.
  absl::StatusOr<Incoming> BeginReplica(uint64_t job, uint32_t rank,
                                        int64_t step, uint64_t bytes);
  // For a snapshot restored into the rank's own directory.
  absl::StatusOr<Incoming> BeginRestore(uint64_t job, uint32_t rank,
                                        int64_t step);
  // Renames it into place as step-S: a replica then drops its rank's older
  // ones beyond kSnapshotsKeptPerRank; a restore is first handed to uid:gid
  // (the owner of the rank's directory).
  absl::Status Commit(Incoming incoming);
  void Abandon(Incoming incoming);

  // Whether the rank's own complete snapshot `step` is here.
  bool HasOwnSnapshot(uint64_t job, uint32_t rank, int64_t step) const;

  // Removes everything held of `job`.
  absl::Status Drop(uint64_t job);
  // The jobs anything is held of.
  std::vector<uint64_t> Jobs() const;

 private:
  MemoryCheckpointStore(std::string root, uint64_t job_limit_bytes)
      : root_(std::move(root)), job_limit_bytes_(job_limit_bytes) {}
  std::string JobDirectory(uint64_t job) const;
  std::string ReplicaDirectory(uint64_t job, uint32_t rank) const;
  absl::StatusOr<OpenStep> OpenIn(const std::string& rank_dir,
                                  int64_t step) const;
  absl::StatusOr<Incoming> Begin(const std::string& parent,
                                 const std::string& name);

  const std::string root_;
  const uint64_t job_limit_bytes_;
};

// "step-S" -> S; nullopt for any other name (a snapshot being written).
std::optional<int64_t> SnapshotStepOf(const std::string& name);

}  // namespace gantry::agent
