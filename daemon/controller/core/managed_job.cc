// Finding the jobs a user's request names (managed_job.h).
#include "daemon/controller/core/managed_job.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "daemon/controller/core/job_filter.h"
#include "daemon/controller/core/job_state_proto.h"

namespace gantry {

absl::StatusOr<JobRuntime*> ManagedJob(ClusterState& state, uint64_t job_id,
                                       const Caller& caller) {
  auto it = state.jobs.find(job_id);
  if (it == state.jobs.end()) {
    return absl::NotFoundError(absl::StrCat("invalid job id ", job_id));
  }
  if (!caller.MayManage(it->second.record.uid())) {
    return absl::PermissionDeniedError(absl::StrCat("access denied: job ",
                                                    job_id, " belongs to ",
                                                    it->second.record.user()));
  }
  return &it->second;
}

JobRuntime* ManagedJobFor(ClusterState& state, uint64_t id,
                          const Caller& caller, v1::CancelResult& result) {
  result.set_job_id(id);
  absl::StatusOr<JobRuntime*> job = ManagedJob(state, id, caller);
  if (!job.ok()) {
    result.set_error(std::string(job.status().message()));
    return nullptr;
  }
  return *job;
}

std::vector<uint64_t> ResolveTargets(
    const ClusterState& state,
    const google::protobuf::RepeatedField<uint64_t>& job_ids,
    const v1::JobFilter& filter,
    google::protobuf::RepeatedPtrField<v1::CancelResult>& unknown) {
  std::vector<uint64_t> ids(job_ids.begin(), job_ids.end());
  std::set<uint64_t> added;
  auto add = [&](uint64_t id) {
    if (added.insert(id).second) ids.push_back(id);
  };
  auto active = [](const JobRuntime& job) {
    return !IsTerminal(FromProto(job.record.state()));
  };
  if (FiltersByAttributes(filter)) {
    for (const auto& [id, job] : state.live_jobs) {
      if (active(*job) && MatchesFilter(filter, job->record)) add(id);
    }
    return ids;
  }
  for (const v1::JobSelector& selector : filter.jobs()) {
    // The job itself, or the tasks of the array, which have consecutive
    // ids from the array's: only the pending and running ones.
    bool matched = false;
    for (auto it = state.live_jobs.lower_bound(selector.job_id());
         it != state.live_jobs.end() &&
         (it->first == selector.job_id() ||
          it->second->record.array_job_id() == selector.job_id());
         ++it) {
      if (active(*it->second) &&
          MatchesSelector(selector, it->second->record)) {
        add(it->first);
        matched = true;
      }
    }
    if (matched) continue;
    // Anything else goes on as given, so the answer says what is wrong with
    // it (finished, unknown, not the caller's).
    if (!selector.has_array_task_id()) {
      add(selector.job_id());
      continue;
    }
    for (auto it = state.jobs.lower_bound(selector.job_id());
         it != state.jobs.end() &&
         it->second.record.array_job_id() == selector.job_id();
         ++it) {
      if (MatchesSelector(selector, it->second.record)) {
        add(it->first);
        matched = true;
      }
    }
    if (matched) continue;
    const std::string name =
        absl::StrCat(selector.job_id(), "_", selector.array_task_id());
    v1::CancelResult* result = unknown.Add();
    result->set_selector(name);
    result->set_error(absl::StrCat("invalid job id ", name));
  }
  return ids;
}

}  // namespace gantry
