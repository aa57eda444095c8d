// Controller: the read-only client views: job listings (one page of
// summaries), one job (live or from the history) and the node table.
#include <algorithm>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/hostlist.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/core/goodput.h"
#include "daemon/controller/core/job_filter.h"
#include "daemon/launch/step_layout.h"

namespace gantry {

absl::StatusOr<v1::ListJobsResponse> Controller::ListJobs(
    const v1::ListJobsRequest& request, const Caller& caller) {
  // A page of summaries stays far below any client's receive limit
  // whatever the jobs hold (a 100,000-node allocation is megabytes).
  constexpr uint32_t kMaxPageJobs = 5000;
  constexpr size_t kMaxPageBytes = 4 << 20;
  if (absl::Status valid = CheckFilter(request.filter()); !valid.ok()) {
    return valid;
  }
  absl::StatusOr<uint64_t> token = ParsePageToken(request.page_token());
  if (!token.ok()) return token.status();
  uint64_t after = *token;
  const uint32_t page_size = request.page_size() == 0
                                 ? kMaxPageJobs
                                 : std::min(request.page_size(), kMaxPageJobs);
  v1::JobFilter filter = request.filter();
  if (!request.user().empty() && filter.users().empty()) {
    filter.add_users(request.user());
  }
  v1::ListJobsResponse response;
  size_t page_bytes = 0;
  // False once the page is full.
  auto list = [&](JobRuntime& job) {
    if (!request.all() && IsTerminal(FromProto(job.record.state()))) {
      return true;
    }
    if (!MatchesFilter(filter, job.record)) return true;
    if (response.jobs_size() >= static_cast<int>(page_size) ||
        page_bytes >= kMaxPageBytes) {
      response.set_next_page_token(
          absl::StrCat(response.jobs(response.jobs_size() - 1).id()));
      return false;
    }
    // Summaries carry no payloads: set them aside for the copy instead of
    // copying them and throwing them away.
    v1::JobSpec& spec = *job.record.mutable_spec();
    std::string script;
    script.swap(*spec.mutable_script());
    google::protobuf::RepeatedPtrField<std::string> args;
    args.Swap(spec.mutable_script_args());
    google::protobuf::Map<std::string, std::string> environment;
    environment.swap(*spec.mutable_environment());
    v1::JobRecord* copy = response.add_jobs();
    *copy = job.record;
    spec.mutable_script()->swap(script);
    spec.mutable_script_args()->Swap(&args);
    spec.mutable_environment()->swap(environment);
    ClearPayloads(*copy);  // step command lines
    if (!caller.MayManage(copy->uid())) ClearPrivateToOwner(*copy);
    copy->set_priority(job.priority);
    copy->set_expected_start_time_ms(job.expected_start_ms);
    page_bytes += copy->ByteSizeLong();
    return true;
  };
  // Without --all only live jobs can qualify: skip the finished ones.
  if (request.all()) {
    for (auto it = core_.state.jobs.upper_bound(after);
         it != core_.state.jobs.end(); ++it) {
      if (!list(it->second)) break;
    }
  } else {
    for (auto it = core_.state.live_jobs.upper_bound(after);
         it != core_.state.live_jobs.end(); ++it) {
      if (!list(*it->second)) break;
    }
  }
  return response;
}

absl::StatusOr<v1::GetJobResponse> Controller::GetJob(
    JobId job_id, const Caller& caller) const {
  v1::GetJobRequest request;
  request.set_job_id(job_id.value());
  return GetJob(request, caller);
}
absl::StatusOr<v1::GetJobResponse> Controller::GetJob(
    const v1::GetJobRequest& request, const Caller& caller) const {
  uint64_t job_id = request.job_id();
  const std::optional<uint32_t> task =
      request.has_array_task_id()
          ? std::optional<uint32_t>(request.array_task_id())
          : std::nullopt;
  const std::string name =
      task ? absl::StrCat(job_id, "_", *task) : absl::StrCat(job_id);
  v1::GetJobResponse response;
  bool found = false;
  // Array tasks have consecutive ids from the array's.
  for (auto it = core_.state.jobs.lower_bound(job_id);
       it != core_.state.jobs.end(); ++it) {
    const v1::JobRecord& record = it->second.record;
    if (task ? record.array_job_id() != job_id : it->first != job_id) break;
    if (task && record.array_task_id() != *task) continue;
    *response.mutable_job() = record;
    response.mutable_job()->set_priority(it->second.priority);
    response.mutable_job()->set_expected_start_time_ms(
        it->second.expected_start_ms);
    for (const std::unique_ptr<ControllerFeature>& feature : features_) {
      feature->FillJob(record, response);
    }
    found = true;
    break;
  }
  if (!found) {
    absl::StatusOr<std::optional<v1::JobRecord>> retired =
        core_.retention.RetiredJob(job_id, task);
    if (!retired.ok()) return retired.status();
    if (!retired->has_value()) {
      return absl::NotFoundError(absl::StrCat(
          "invalid job id ", name, task ? " (no such array task)" : ""));
    }
    *response.mutable_job() = std::move(**retired);
  }
  job_id = response.job().id();
  *response.mutable_job()->mutable_goodput() =
      ToProto(SumTimeline(GoodputTimeline(response.job(), clock_.NowMs())));
  response.mutable_job()->mutable_spec()->clear_environment();
  // Others see a job as squeue shows it, not what it runs.
  if (!caller.MayManage(response.job().uid())) {
    ClearPayloads(*response.mutable_job());
    ClearPrivateToOwner(*response.mutable_job());
  }
  absl::StatusOr<std::vector<v1::EventRecord>> events =
      store_.JobEvents(job_id);
  uint64_t stored_up_to = 0;
  if (events.ok()) {
    for (v1::EventRecord& event : *events) {
      stored_up_to = std::max(stored_up_to, event.sequence());
      *response.add_events() = std::move(event);
    }
  }
  // The record above already shows what the batch being written and the
  // one being staged change: so does its history (events are numbered in
  // order, and the write may land while the store is read).
  for (const StateStore::Batch* pending : core_.commits.Unwritten()) {
    if (pending == nullptr) continue;
    for (const v1::EventRecord& event : pending->events) {
      if (event.job_id() == job_id && event.sequence() > stored_up_to) {
        *response.add_events() = event;
      }
    }
  }
  return response;
}

v1::ListNodesResponse Controller::ListNodes() const {
  v1::ListNodesResponse response;
  for (const auto& [name, node] : core_.state.nodes) {
    v1::NodeRecord* record = response.add_nodes();
    *record = node.record;
    record->set_cpus_allocated(node.usage.cpus);
    record->set_gpus_allocated(static_cast<uint32_t>(node.usage.gpus.size()));
    record->set_mem_allocated_mb(node.usage.mem_mb);
    for (const std::string& leaf : core_.switch_tree.LeafSwitchesOf(name)) {
      record->add_leaf_switches(leaf);
    }
  }
  for (const PartitionConfig& partition : options_.partitions) {
    v1::PartitionInfo* info = response.add_partitions();
    info->set_name(partition.name);
    info->set_is_default(partition.is_default);
    info->set_default_time_seconds(partition.default_time_seconds);
    info->set_max_time_seconds(partition.max_time_seconds);
    info->set_max_nodes(partition.max_nodes);
    info->set_nodes(partition.all_nodes
                        ? "ALL"
                        : CompressHostlist({partition.nodes.begin(),
                                            partition.nodes.end()}));
  }
  return response;
}

}  // namespace gantry
