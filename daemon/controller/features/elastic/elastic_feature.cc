#include "daemon/controller/features/elastic/elastic_feature.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/scheduler/node_range.h"

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

// Whether the attempt before the running one ended in a grow (Grow).
bool StartedByGrow(const v1::JobRecord& record) {
  const int n = record.attempts_size();
  return n >= 2 &&
         record.attempts(n - 2).end_detail().rfind(kGrowDetailPrefix, 0) == 0;
}

}  // namespace

ElasticFeature::ElasticFeature(FeatureContext& context) : context_(context) {}

void ElasticFeature::OnStateLoaded(const v1::FairShareRecord* /*retired*/) {
  context_.ForEachLiveJob([this](const v1::JobRecord& job) {
    if (BelowFullSize(job)) below_full_size_.insert(job.id());
  });
}

void ElasticFeature::OnJobStarted(const v1::JobRecord& job) {
  if (BelowFullSize(job)) below_full_size_.insert(job.id());
}

void ElasticFeature::OnCheckpoint(const v1::JobRecord& job) {
  // The checkpoint a planned grow waited for: the next pass restarts it.
  if (waits_.count(job.id())) context_.RequestSchedule();
}

void ElasticFeature::AfterSchedulingPass() {
  std::vector<const v1::JobRecord*> candidates;
  for (auto it = below_full_size_.begin(); it != below_full_size_.end();) {
    const v1::JobRecord* job = context_.FindJob(*it);
    if (job == nullptr || !BelowFullSize(*job)) {
      waits_.erase(*it);
      it = below_full_size_.erase(it);
      continue;
    }
    candidates.push_back(job);
    ++it;
  }
  if (candidates.empty()) return;
  std::set<std::string> waiting_partitions;
  context_.ForEachLiveJob([&](const v1::JobRecord& job) {
    if (WaitsForNodes(job)) waiting_partitions.insert(job.spec().partition());
  });
  for (const v1::JobRecord* job : candidates) {
    const v1::JobSpec& spec = job->spec();
    const auto current = static_cast<uint32_t>(job->allocation_size());
    const uint32_t missing = spec.nodes() - current;
    GrowInput input;
    input.range = NodeRangeOf(spec.nodes(), spec.min_nodes());
    input.current_nodes = current;
    input.free_nodes =
        context_.NodesFreeBeside(job->id(), missing) ? missing : 0;
    input.elastic = spec.elastic();
    input.others_waiting = waiting_partitions.count(spec.partition()) > 0;
    input.has_checkpoint = job->latest_checkpoint().time_ms() > 0;
    input.grow_fell_short = StartedByGrow(*job);
    auto wait = waits_.find(job->id());
    if (wait != waits_.end() && wait->second.attempt != job->attempt()) {
      waits_.erase(wait);
      wait = waits_.end();
    }
    input.checkpoint_since_wait =
        wait != waits_.end() &&
        job->latest_checkpoint().time_ms() > wait->second.checkpoint_ms;
    switch (DecideGrow(input)) {
      case GrowAction::kNone:
        if (wait != waits_.end()) waits_.erase(wait);
        break;
      case GrowAction::kAtNextCheckpoint:
        if (wait == waits_.end()) {
          waits_[job->id()] =
              GrowWait{job->attempt(), job->latest_checkpoint().time_ms()};
          context_.RecordEvent(
              job->id(), "", "resize",
              absl::StrCat(missing, " node(s) free: growing to ", spec.nodes(),
                           " node(s) at the next checkpoint"));
        }
        break;
      case GrowAction::kNow:
        if (wait != waits_.end()) waits_.erase(wait);
        Grow(*job, spec.nodes());
        break;
    }
  }
}

void ElasticFeature::Grow(const v1::JobRecord& job, uint32_t to_nodes) {
  const uint64_t id = job.id();
  const uint32_t attempt = job.attempt();
  const std::string detail =
      absl::StrCat(kGrowDetailPrefix, "restarting on ", to_nodes,
                   " node(s) (from ", job.allocation_size(), ", --elastic)");
  // The job's own choice, not a failure: no restart budget spent, no
  // backoff; the attempt ends as any requeue does.
  if (absl::Status status = context_.RestartUncharged(id, "", detail);
      !status.ok()) {
    log::Warn("elastic grow refused",
              {{"job", id}, {"error", status.ToString()}});
    return;
  }
  log::Info("elastic job grows",
            {{"job", id}, {"to_nodes", to_nodes}, {"attempt", attempt}});
}

std::unique_ptr<ControllerFeature> MakeElasticFeature(FeatureContext& context) {
  return std::make_unique<ElasticFeature>(context);
}

}  // namespace gantry
