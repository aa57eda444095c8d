// One virtual node of gantry-fleet: its own AgentService.Connect
// stream to gantryd, its own name, the fleet's inventory, and simulated
// ranks (simulated_ranks.h). It speaks as the real agent does (the messages
// come from agent_messages.h): Register with running ranks and
// unacknowledged exits, heartbeats at the interval the controller asks for,
// STARTED and EXITED rank events, acks honoured, and a redial with backoff
// whenever the stream breaks.
//
// The stream is driven through gRPC's asynchronous completion-queue API, so
// thousands of nodes share a few threads: a node never blocks, it starts an
// operation and continues in OnCompletion when the queue returns its tag.
//
// Thread-safety: none. A node belongs to one SimulatedNodeHost (a shard of
// the fleet) and every call into it is made from that host's one thread.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "agent/link/agent_messages.h"
#include "agent/simulated/simulated_ranks.h"
#include "common/mutex.h"
#include "gantry/v1/agent.grpc.pb.h"

namespace gantry::agent {

class SimulatedNode;

// What a completion-queue tag points to: the operation that finished and
// whose it was.
struct CompletionTag {
  enum class Op { kStart, kRead, kWrite, kFinish, kTick };
  void* owner = nullptr;
  Op op = Op::kTick;
};

// Logs, once for the whole fleet, the moment every rank of a job attempt has
// started on the fleet's nodes (what the gang-start benchmark waits for):
// `msg="every rank of a simulated job started" job=.. attempt=.. ranks=..
// unix_ms=..`. A job spread over several fleets is never whole in one and is
// not logged. Thread-safe.
class GangStartLog {
 public:
  // `count` ranks of the attempt started on one node; `world` is the job's
  // rank count (GANTRY_NTASKS).
  void RanksStarted(uint64_t job_id, uint32_t attempt, uint32_t count,
                    uint32_t world);
  // A rank of the attempt ended: its count starts over.
  void RankEnded(uint64_t job_id, uint32_t attempt);

 private:
  Mutex mutex_;
  // Attempts not yet whole; bounded (the oldest are forgotten).
  std::map<std::pair<uint64_t, uint32_t>, uint32_t> started_
      ABSL_GUARDED_BY(mutex_);
};

// Everything the nodes of a fleet share, read-only once the fleet runs
// (the GangStartLog is thread-safe).
struct SimulatedNodeShared {
  std::string address;  // every node's MASTER_ADDR
  std::string boot_id;  // one per fleet process: a restart is a reboot
  v1::NodeInventory inventory;
  std::vector<std::string> features;  // every node's --features
  SimulatedRankPlan rank_defaults;
  bool use_munge = true;
  std::string munge_socket;
  GangStartLog* gang_starts = nullptr;
  // Pre-flight checks (simulated_preflight.h): the plan file, read at
  // every check (empty: every node passes), and how long one takes.
  std::string preflight_plan_path;
  uint32_t preflight_ms = 200;
};

// The shard that drives a node: its completion queue, its clock, its
// timers and the gate that limits how many nodes dial at once.
class SimulatedNodeHost {
 public:
  virtual ~SimulatedNodeHost() = default;
  virtual grpc::CompletionQueue* queue() = 0;
  virtual int64_t NowMs() const = 0;
  // Calls node->OnWake(at_ms) at (or soon after) `at_ms`.
  virtual void PushWake(SimulatedNode* node, int64_t at_ms) = 0;
  // Calls node->Dial() now or when a dial slot frees up.
  virtual void RequestDial(SimulatedNode* node) = 0;
  // The node's dial ended (registered, or failed): the slot is free.
  virtual void ReleaseDialSlot() = 0;
  // Counters and rate-limited logs for the fleet.
  virtual void NodeConnected(bool connected) = 0;
  virtual void StreamEnded(const SimulatedNode& node,
                           const grpc::Status& status) = 0;
  virtual void CredentialFailed(const absl::Status& status) = 0;
};

class SimulatedNode {
 public:
  // `stub` (shared with other nodes on the same channel) outlives the node.
  SimulatedNode(SimulatedNodeHost& host, const SimulatedNodeShared& shared,
                std::string name, uint32_t index, v1::AgentService::Stub* stub);
  SimulatedNode(const SimulatedNode&) = delete;
  SimulatedNode& operator=(const SimulatedNode&) = delete;
  ~SimulatedNode();

  // Starts dialling the controller (through the host's dial gate).
  void Start();
  // Called by the host when the node may dial: opens the stream.
  void Dial();
  // Ends the stream and dials no more; idle() once gRPC has let go of it.
  void Stop();
  bool idle() const { return state_ == State::kIdle; }
  bool connected() const { return state_ == State::kConnected; }
  const std::string& name() const { return identity_.node_name; }

  // A completion-queue tag of this node came back.
  void OnCompletion(CompletionTag::Op op, bool ok);
  // A wake the node asked for (PushWake) is due; stale ones are ignored.
  void OnWake(int64_t at_ms);

 private:
  enum class State { kIdle, kStarting, kRegistering, kConnected, kClosing };
  using Stream =
      grpc::ClientAsyncReaderWriter<v1::AgentMessage, v1::ControllerMessage>;

  void OnStarted(bool ok);
  void OnRead(bool ok);
  void OnWritten(bool ok);
  void OnFinished();
  void OnMessage(const v1::ControllerMessage& message);
  // Queues a message on the stream; dropped when no stream is up (what must
  // not be lost is in the ExitJournal and goes in the next Register).
  void Send(v1::AgentMessage message);
  void WriteNext();
  void StartRead();
  // The stream is broken or must end: cancel it and finish once every
  // operation is back.
  void Break();
  void FinishWhenIdle();
  void RecordEnds(std::vector<SimulatedRankEnd> ends);
  void SendHeartbeat(int64_t now_ms);
  // Answers a pre-flight check after the fleet's simulated time, as the
  // plan says.
  void StartPreflight(const v1::PreflightCheck& check, int64_t now_ms);
  // Asks the host for a wake at the earliest thing this node waits for.
  void ScheduleWake();

  SimulatedNodeHost& host_;
  const SimulatedNodeShared& shared_;
  const AgentIdentity identity_;
  const uint32_t index_;
  v1::AgentService::Stub* const stub_;

  CompletionTag start_tag_, read_tag_, write_tag_, finish_tag_;
  State state_ = State::kIdle;
  bool stopping_ = false;
  bool holds_dial_slot_ = false;
  bool waiting_for_dial_ = false;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<Stream> stream_;
  int in_flight_ = 0;  // start, read, write and finish operations
  bool reading_ = false;
  bool writing_ = false;
  bool finish_called_ = false;
  grpc::Status final_status_;
  v1::ControllerMessage incoming_;
  std::deque<v1::AgentMessage> outgoing_;  // front is being written
  bool heartbeat_queued_ = false;

  SimulatedRanks ranks_;
  // Pre-flight answers not yet due, in due order (one delay for all).
  std::deque<std::pair<int64_t, v1::AgentMessage>> preflight_answers_;
  ExitJournal exits_;
  uint32_t heartbeat_interval_ms_ = 1000;
  int64_t next_heartbeat_ms_ = 0;
  int64_t redial_at_ms_ = 0;
  int backoff_ms_ = 200;
  std::minstd_rand random_;
  // The earliest wake asked of the host and not yet delivered.
  int64_t wake_pending_ms_ = std::numeric_limits<int64_t>::max();
};

}  // namespace gantry::agent
