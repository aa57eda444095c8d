// The agent's part of in-memory checkpoints (docs/user-guide.md "In-memory
// checkpoints"): keeps the node's snapshot store
// (agent/checkpoint/memory_checkpoint_store.h), pushes every new complete
// snapshot of the ranks that ran here to the peer the controller chose (a node
// under another leaf switch), takes the peers' pushes and serves fetches
// (agent/checkpoint/memory_checkpoint_wire.h), and before a restarted
// attempt's ranks start, restores each one's snapshot from whichever node
// holds it.
//
// Its requests arrive on the pre-flight listener's port
// (agent/preflight/preflight_listener.h AddProtocol), whose accepting thread
// reads every connection's first line within a second from a bounded set, so
// idle connections hold nothing here. Anyone who can reach the port can
// connect, so a request must carry the job's token, a random secret the
// controller gives only to the nodes of the job's plan
// (MemoryCheckpointPlan): one with any other token is closed unanswered,
// and only proven requests are served, each on a thread of its own, at most
// kMaxConnections at once. A push is refused above the job's byte limit.
//
// Thread-safe. One thread replicates; each request is served on a thread
// of its own; the destructor ends them all.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "agent/checkpoint/memory_checkpoint_store.h"
#include "agent/checkpoint/memory_checkpoint_wire.h"
#include "common/mutex.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

struct MemoryCheckpointServiceOptions {
  // How often the ranks' directories are looked at for new snapshots.
  std::chrono::milliseconds poll_interval{1000};
  // However large, one snapshot's transfer ends by then.
  std::chrono::seconds transfer_timeout{300};
};

class MemoryCheckpointService {
 public:
  // Called (from the service's threads) when what the node holds changed.
  using Changed = std::function<void()>;

  MemoryCheckpointService(std::unique_ptr<MemoryCheckpointStore> store,
                          MemoryCheckpointServiceOptions options,
                          Changed changed);
  ~MemoryCheckpointService();
  MemoryCheckpointService(const MemoryCheckpointService&) = delete;
  MemoryCheckpointService& operator=(const MemoryCheckpointService&) = delete;

  // Ends every transfer in progress and refuses new ones (the agent is
  // stopping: a frozen peer must not hold it). Idempotent; the destructor
  // calls it.
  void Abort();

  // A connection whose first line (`line`, starting "GMC1 ") the listener
  // read: served on a thread of its own when its token is right; false
  // (the caller closes it) otherwise. Does not block.
  bool Take(int fd, const std::string& line);

  // The rank's directory for a launch (GANTRY_MEMORY_CHECKPOINT_DIR).
  absl::StatusOr<std::string> PrepareRankDirectory(uint64_t job, uint32_t rank,
                                                   uid_t uid, gid_t gid);

  // The controller's plan for a job (a newer one replaces it).
  void Plan(const v1::MemoryCheckpointPlan& plan);
  // The job is over: forget its plan, drop its snapshots.
  void Drop(uint64_t job);

  // Brings `launch.memory_restore`'s snapshot into the directories of the
  // ranks it names (from this node when it is here, else fetched from the
  // holder named), once per attempt: every launch of a restarted attempt
  // on a node carries the restore, and a later one (a step's) must neither
  // fetch again nor fail because the ranks moved on from that step. Runs
  // on the caller's thread, one restore at a time; errors name the rank,
  // the holder and what failed.
  absl::Status Restore(const v1::LaunchRanks& launch);

  // What the node holds, when it changed since the last report (or
  // `always`).
  std::optional<v1::MemoryCheckpointReport> Report(bool always);

 private:
  static constexpr size_t kMaxConnections = 16;

  // A connection this node opened, known to Abort while it lasts.
  class OutgoingTransfer {
   public:
    OutgoingTransfer(MemoryCheckpointService& service, int fd);
    ~OutgoingTransfer();
    OutgoingTransfer(const OutgoingTransfer&) = delete;
    OutgoingTransfer& operator=(const OutgoingTransfer&) = delete;
    // False once Abort ran: the transfer must not begin.
    bool admitted() const { return admitted_; }

   private:
    MemoryCheckpointService& service_;
    const int fd_;
    bool admitted_ = false;
  };

  void Serve(int fd, MemoryCheckpointRequest request);
  void ServePut(int fd, const MemoryCheckpointRequest& request,
                TransferDeadline deadline);
  void ServeGet(int fd, const MemoryCheckpointRequest& request,
                TransferDeadline deadline);
  bool TokenMatches(uint64_t job, const std::string& token)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void ReplicateLoop();
  // Pushes what is new, then looks at what the node holds.
  void ReplicateOnce();
  absl::Status Push(uint64_t job, uint32_t rank, int64_t step,
                    const v1::MemoryCheckpointPeer& peer,
                    const std::string& token);
  // Only within Restore, which holds restore_mutex_ from its check of
  // restored_ to its mark there: two launches of one attempt never fetch
  // its snapshots twice.
  absl::Status Fetch(uint64_t job, uint32_t rank, int64_t step,
                     const v1::MemoryCheckpointPeer& holder,
                     const std::string& token)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(restore_mutex_);
  void WakeReplicator();

  std::unique_ptr<MemoryCheckpointStore> store_;
  const MemoryCheckpointServiceOptions options_;
  const Changed changed_;

  Mutex mutex_;
  CondVar replicate_wake_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  bool rescan_due_ ABSL_GUARDED_BY(mutex_) = false;
  std::map<uint64_t, v1::MemoryCheckpointPlan> plans_ ABSL_GUARDED_BY(mutex_);
  // The newest step of each (job, rank) pushed to the plan's peer.
  std::map<std::pair<uint64_t, uint32_t>, int64_t> pushed_
      ABSL_GUARDED_BY(mutex_);
  std::vector<v1::HeldMemoryCheckpoint> held_ ABSL_GUARDED_BY(mutex_);
  uint64_t generation_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t reported_generation_ ABSL_GUARDED_BY(mutex_) = ~uint64_t{0};
  // Why the last push of a (job, rank) failed, so it is logged once.
  std::map<std::pair<uint64_t, uint32_t>, std::string> push_problems_
      ABSL_GUARDED_BY(mutex_);
  std::set<std::string> refusals_logged_ ABSL_GUARDED_BY(mutex_);
  // Attempts whose restore is done (Restore); dropped with their job.
  std::set<std::pair<uint64_t, uint32_t>> restored_ ABSL_GUARDED_BY(mutex_);
  Mutex restore_mutex_;  // one Restore at a time
  // Connections in progress, served and opened (Abort shuts them down).
  std::set<int> serving_ ABSL_GUARDED_BY(mutex_);
  std::map<int, std::thread> connections_ ABSL_GUARDED_BY(mutex_);
  std::vector<std::thread> finished_ ABSL_GUARDED_BY(mutex_);
  std::thread replicator_;
};

}  // namespace gantry::agent
