// Controller: growing jobs with a node range back to their full size. A
// restart already tries the full size first (the scheduler's part, see
// daemon/scheduler/node_range.h); this is the other way back, for jobs that
// said they take a change of size at any time (--elastic, a torchrun
// elastic rendezvous): after each scheduling pass, a running one below its
// full size is restarted onto MAX nodes when that many are free, at its
// next checkpoint or at once (DecideGrow). Runs on the loop.
#include <set>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/scheduling_input.h"
#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/node_range.h"
#include "daemon/scheduler/scheduler.h"

namespace gantry {
namespace {

bool WaitsForNodes(const v1::JobRecord& record) {
  return record.state() == v1::PENDING && !record.held() &&
         (record.reason() == "Resources" || record.reason() == "Priority" ||
          record.reason() == "Topology" || record.reason() == "NodeDown");
}

bool BelowFullSize(const v1::JobRecord& record) {
  const v1::JobSpec& spec = record.spec();
  return record.state() == v1::RUNNING && spec.elastic() &&
         spec.min_nodes() > 0 &&
         static_cast<uint32_t>(record.allocation_size()) < spec.nodes();
}

constexpr char kGrowDetailPrefix[] = "resized: ";

// Whether the attempt before the running one ended in a grow (GrowJob).
bool StartedByGrow(const v1::JobRecord& record) {
  const int n = record.attempts_size();
  return n >= 2 &&
         record.attempts(n - 2).end_detail().rfind(kGrowDetailPrefix, 0) == 0;
}

}  // namespace

void Controller::ConsiderGrowing() {
  std::vector<JobRuntime*> candidates;
  std::set<std::string> waiting_partitions;
  for (auto& [id, live] : live_jobs_) {
    const v1::JobRecord& record = live->record;
    if (WaitsForNodes(record))
      waiting_partitions.insert(record.spec().partition());
    if (BelowFullSize(record)) {
      candidates.push_back(live);
    } else {
      live->grow_wait.reset();
    }
  }
  if (candidates.empty()) return;
  std::vector<const std::string*> names;
  const std::vector<NodeSnapshot> snapshot = NodeSnapshots(names);
  for (JobRuntime* job : candidates) {
    const v1::JobRecord& record = job->record;
    const v1::JobSpec& spec = record.spec();
    const auto current = static_cast<uint32_t>(record.allocation_size());
    // Whether the missing nodes fit now beside the job's own: a job of
    // that many nodes that may not use them (nor hot spares, kept for
    // failures), placed as the scheduler would.
    PendingJob probe = PendingJobOf(record, ParsedConstraint(*job));
    probe.nodes = spec.nodes() - current;
    probe.min_nodes = 0;
    probe.is_restart = false;
    probe.required_nodes.clear();
    for (const v1::NodeAllocation& share : record.allocation()) {
      probe.excluded_nodes.push_back(share.node());
    }
    // The missing nodes must join the job's own in one part of the fabric
    // (fabric_parts.h): a restart at full size could not use others, and
    // would come back at the same size.
    if (topology_ && !record.allocation().empty()) {
      const std::string part =
          FabricPartName(topology_->topology, record.allocation(0).node());
      for (const auto& [name, node] : nodes_) {
        if (FabricPartName(topology_->topology, name) != part) {
          probe.excluded_nodes.push_back(name);
        }
      }
    }
    SchedulerOptions probe_options;
    probe_options.backfill = false;
    probe_options.unlisted_nodes = options_.unlisted_nodes;
    const bool fits =
        !Schedule(snapshot, {probe}, {}, probe_options).starts.empty();
    GrowInput input;
    input.range = NodeRangeOf(spec.nodes(), spec.min_nodes());
    input.current_nodes = current;
    input.free_nodes = fits ? probe.nodes : 0;
    input.elastic = spec.elastic();
    input.others_waiting = waiting_partitions.count(spec.partition()) > 0;
    input.has_checkpoint = record.latest_checkpoint().time_ms() > 0;
    input.grow_fell_short = StartedByGrow(record);
    input.checkpoint_since_wait =
        job->grow_wait.has_value() &&
        job->grow_wait->attempt == record.attempt() &&
        record.latest_checkpoint().time_ms() > job->grow_wait->checkpoint_ms;
    switch (DecideGrow(input)) {
      case GrowAction::kNone:
        job->grow_wait.reset();
        break;
      case GrowAction::kAtNextCheckpoint:
        if (!job->grow_wait.has_value() ||
            job->grow_wait->attempt != record.attempt()) {
          job->grow_wait = JobRuntime::GrowWait{
              record.attempt(), record.latest_checkpoint().time_ms()};
          StageEvent(
              record.id(), "", "resize",
              absl::StrCat(spec.nodes() - current, " node(s) free: growing to ",
                           spec.nodes(), " node(s) at the next checkpoint"));
        }
        break;
      case GrowAction::kNow:
        job->grow_wait.reset();
        GrowJob(*job, spec.nodes());
        break;
    }
  }
}

void Controller::GrowJob(JobRuntime& job, uint32_t to_nodes) {
  v1::JobRecord& record = job.record;
  const std::string detail =
      absl::StrCat(kGrowDetailPrefix, "restarting on ", to_nodes,
                   " node(s) (from ", record.allocation_size(), ", --elastic)");
  JobEvent event{JobEvent::Kind::kRequeueRequest};
  event.requeue = true;
  if (absl::Status status = ApplyEvent(job, event, detail); !status.ok()) {
    log::Warn("elastic grow refused",
              {{"job", record.id()}, {"error", status.ToString()}});
    return;
  }
  // The job's own choice, not a failure: no restart budget spent, no
  // backoff.
  record.set_uncharged_attempts(record.uncharged_attempts() + 1);
  record.set_eligible_time_ms(clock_.NowMs());
  StageJob(job);
  log::Info("elastic job grows", {{"job", record.id()},
                                  {"to_nodes", to_nodes},
                                  {"attempt", record.attempt()}});
}

}  // namespace gantry
