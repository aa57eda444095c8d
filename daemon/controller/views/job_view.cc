#include "daemon/controller/views/job_view.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/controller/core/goodput.h"
#include "daemon/controller/core/job_filter.h"

namespace gantry {

absl::StatusOr<v1::GetJobResponse> ViewJob(const JobViewSources& sources,
                                           const v1::GetJobRequest& request,
                                           const Caller& caller,
                                           int64_t now_ms) {
  uint64_t job_id = request.job_id();
  const std::optional<uint32_t> task =
      request.has_array_task_id()
          ? std::optional<uint32_t>(request.array_task_id())
          : std::nullopt;
  v1::GetJobResponse response;
  bool found = false;
  // Array tasks have consecutive ids from the array's.
  const ClusterState& state = sources.state;
  for (auto it = state.jobs.lower_bound(job_id); it != state.jobs.end(); ++it) {
    const v1::JobRecord& record = it->second.record;
    if (task ? record.array_job_id() != job_id : it->first != job_id) break;
    if (task && record.array_task_id() != *task) continue;
    *response.mutable_job() = record;
    response.mutable_job()->set_priority(it->second.priority);
    response.mutable_job()->set_expected_start_time_ms(
        it->second.expected_start_ms);
    for (const std::unique_ptr<ControllerFeature>& feature : sources.features) {
      feature->FillJob(record, response);
    }
    found = true;
    break;
  }
  if (!found) {
    absl::StatusOr<std::optional<v1::JobRecord>> retired =
        sources.retention.RetiredJob(job_id, task);
    if (!retired.ok()) return retired.status();
    if (!retired->has_value()) {
      const std::string name =
          task ? absl::StrCat(job_id, "_", *task) : absl::StrCat(job_id);
      return absl::NotFoundError(absl::StrCat(
          "invalid job id ", name, task ? " (no such array task)" : ""));
    }
    *response.mutable_job() = std::move(**retired);
  }
  job_id = response.job().id();
  *response.mutable_job()->mutable_goodput() =
      ToProto(SumTimeline(GoodputTimeline(response.job(), now_ms)));
  response.mutable_job()->mutable_spec()->clear_environment();
  // Others see a job as squeue shows it, not what it runs.
  if (!caller.MayManage(response.job().uid())) {
    ClearPayloads(*response.mutable_job());
    ClearPrivateToOwner(*response.mutable_job());
  }
  absl::StatusOr<std::vector<v1::EventRecord>> events =
      sources.store.JobEvents(job_id);
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
  for (const StateStore::Batch* pending : sources.commits.Unwritten()) {
    if (pending == nullptr) continue;
    for (const v1::EventRecord& event : pending->events) {
      if (event.job_id() == job_id && event.sequence() > stored_up_to) {
        *response.add_events() = event;
      }
    }
  }
  return response;
}

}  // namespace gantry
