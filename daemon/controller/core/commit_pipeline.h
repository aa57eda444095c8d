// The group commit: what the controller changes is staged here and written
// in one synced batch before anyone is told about it (a submission's reply,
// a launch to an agent, an ack of a rank exit: each an AfterCommit action).
// One fsync covers every request that arrived in a loop turn or, while a
// write is in flight on the StoreWriter's thread, every request that
// arrived during it.
//
// Jobs and nodes are staged by key and copied into the batch only when it
// goes out, once each however often they changed in between: a gang's
// thousand rank events in one batch used to copy its record a thousand
// times, each copy holding a thousand ranks.
//
// Threading: the loop thread of `io` only.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "absl/status/status.h"
#include "common/clock.h"
#include "daemon/controller/core/commit_latencies.h"
#include "daemon/store/state_store.h"
#include "daemon/store/store_writer.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

class ControllerMetrics;

class CommitPipeline {
 public:
  // Where the pipeline finds the current records of what was staged when
  // a batch goes out (null: gone since, e.g. a job retired meanwhile), and
  // who hears of each staged job and event.
  struct Hooks {
    std::function<const v1::JobRecord*(uint64_t id)> find_job;
    std::function<const v1::NodeRecord*(const std::string& name)> find_node;
    std::function<void(const v1::JobRecord&)> on_job_staged;
    std::function<void(const v1::EventRecord&)> on_event_staged;
  };

  // `metrics` may be null (unit tests).
  CommitPipeline(boost::asio::io_context& io, StateStore& store,
                 const Clock& clock, ControllerMetrics* metrics, Hooks hooks);
  CommitPipeline(const CommitPipeline&) = delete;
  CommitPipeline& operator=(const CommitPipeline&) = delete;

  // The sequence the next event gets (from the stored state, at start).
  void ResumeEventsAt(uint64_t next_sequence) {
    next_event_sequence_ = next_sequence;
  }

  void StageJob(const v1::JobRecord& record);
  void StageNode(const v1::NodeRecord& record);
  // An event of the job's (or the node's, job 0) history.
  void StageEvent(uint64_t job_id, const std::string& node,
                  const std::string& kind, const std::string& detail);
  // Runs `action` on the loop once everything staged so far is durable
  // (null: only makes sure a batch goes out).
  void AfterCommit(std::function<void()> action);
  // The batch being assembled, for what is staged whole rather than by
  // key (retirements, environments, the topology, counters). Call
  // AfterCommit(nullptr) after staging into it.
  StateStore::Batch& staged() { return batch_; }
  // The batches not yet in the store: the one being assembled and the one
  // being written (null when none), in the order they will land.
  std::array<const StateStore::Batch*, 2> Unwritten() const {
    return {writer_.in_flight(), &batch_};
  }
  const CommitLatencies& latencies() const { return latencies_; }

 private:
  // Hands the staged batch to the writer, unless one is in flight.
  void Flush();
  // A batch is durable (or failed: then the process aborts): runs its
  // actions and sends out what was staged meanwhile.
  void CommitDone(const absl::Status& status, double seconds,
                  std::vector<std::function<void()>>& actions);

  boost::asio::io_context& io_;
  const Clock& clock_;
  ControllerMetrics* const metrics_;
  const Hooks hooks_;
  uint64_t next_event_sequence_ = 1;
  StateStore::Batch batch_;
  std::set<uint64_t> staged_jobs_;
  std::set<std::string> staged_nodes_;
  std::vector<std::function<void()>> after_commit_;
  bool flush_posted_ = false;
  CommitLatencies latencies_;
  StoreWriter writer_;  // last: its destructor waits for the write in flight
};

}  // namespace gantry
