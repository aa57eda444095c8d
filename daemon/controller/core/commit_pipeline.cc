// The group commit (commit_pipeline.h).
#include "daemon/controller/core/commit_pipeline.h"

#include <cstdlib>
#include <utility>

#include <boost/asio/post.hpp>

#include "common/log.h"
#include "daemon/controller/core/controller_metrics.h"

namespace gantry {

CommitPipeline::CommitPipeline(boost::asio::io_context& io, StateStore& store,
                               const Clock& clock, ControllerMetrics* metrics,
                               Hooks hooks)
    : io_(io),
      clock_(clock),
      metrics_(metrics),
      hooks_(std::move(hooks)),
      writer_(io, store) {}

void CommitPipeline::StageJob(const v1::JobRecord& record) {
  if (hooks_.on_job_staged) hooks_.on_job_staged(record);
  staged_jobs_.insert(record.id());
  AfterCommit(nullptr);
}

void CommitPipeline::StageNode(const v1::NodeRecord& record) {
  staged_nodes_.insert(record.name());
  AfterCommit(nullptr);
}

void CommitPipeline::StageEvent(uint64_t job_id, const std::string& node,
                                const std::string& kind,
                                const std::string& detail) {
  v1::EventRecord event;
  event.set_sequence(next_event_sequence_++);
  event.set_time_ms(clock_.NowMs());
  event.set_job_id(job_id);
  event.set_node(node);
  event.set_kind(kind);
  event.set_detail(detail);
  if (hooks_.on_event_staged) hooks_.on_event_staged(event);
  batch_.events.push_back(std::move(event));
  batch_.next_event_sequence = next_event_sequence_;
  AfterCommit(nullptr);
}

void CommitPipeline::AfterCommit(std::function<void()> action) {
  if (action) after_commit_.push_back(std::move(action));
  if (flush_posted_) return;
  flush_posted_ = true;
  // Posted behind whatever is already queued, so every request that arrived
  // in this turn lands in the same batch.
  boost::asio::post(io_, [this] { Flush(); });
}

void CommitPipeline::Flush() {
  flush_posted_ = false;
  // One batch at a time: what is staged meanwhile waits for the one in
  // flight and then goes out whole (CommitDone starts it).
  if (writer_.busy()) return;
  StateStore::Batch batch = std::move(batch_);
  batch_ = StateStore::Batch();
  for (uint64_t id : staged_jobs_) {
    // A job retired since it was staged is in batch.retired instead.
    if (const v1::JobRecord* record = hooks_.find_job(id)) {
      batch.jobs.push_back(*record);
    }
  }
  staged_jobs_.clear();
  for (const std::string& name : staged_nodes_) {
    if (const v1::NodeRecord* record = hooks_.find_node(name)) {
      batch.nodes.push_back(*record);
    }
  }
  staged_nodes_.clear();
  std::vector<std::function<void()>> actions = std::move(after_commit_);
  after_commit_.clear();
  if (batch.empty()) {
    for (auto& action : actions) action();
    return;
  }
  writer_.Commit(std::move(batch),
                 [this, actions = std::move(actions)](
                     const absl::Status& status, double seconds) mutable {
                   CommitDone(status, seconds, actions);
                 });
}

void CommitPipeline::CommitDone(const absl::Status& status, double seconds,
                                std::vector<std::function<void()>>& actions) {
  latencies_.Add(seconds);
  if (metrics_ != nullptr) metrics_->ObserveStoreCommit(seconds);
  if (!status.ok()) {
    // Memory now holds changes the disk does not: the only safe state is
    // the one on disk, so stop and let systemd restart us from it.
    log::Error("cannot persist state; exiting to recover from disk",
               {{"error", status.ToString()}});
    std::abort();
  }
  for (auto& action : actions) action();
  // What was staged during the write goes out now.
  if (!batch_.empty() || !staged_jobs_.empty() || !staged_nodes_.empty() ||
      !after_commit_.empty()) {
    Flush();
  }
}

}  // namespace gantry
