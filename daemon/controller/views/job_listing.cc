#include "daemon/controller/views/job_listing.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "daemon/controller/core/job_filter.h"
#include "daemon/controller/core/job_state_proto.h"
#include "daemon/controller/views/job_summary.h"
#include "daemon/scheduler/job_state_machine.h"

namespace gantry {

absl::StatusOr<v1::ListJobsResponse> ListJobs(
    const ClusterState& state, const v1::ListJobsRequest& request,
    const Caller& caller) {
  // A page of summaries stays far below any client's receive limit
  // whatever the jobs hold (a 100,000-node allocation is megabytes).
  constexpr uint32_t kMaxPageJobs = 5000;
  constexpr size_t kMaxPageBytes = 4 << 20;
  if (absl::Status valid = CheckFilter(request.filter()); !valid.ok()) {
    return valid;
  }
  absl::StatusOr<uint64_t> token = ParsePageToken(request.page_token());
  if (!token.ok()) return token.status();
  const uint64_t after = *token;
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
  auto list = [&](const JobRuntime& job) {
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
    v1::JobRecord& summary = *response.add_jobs();
    summary = JobSummaryOf(job.record);
    ClearPayloads(summary);  // step command lines
    if (!caller.MayManage(summary.uid())) ClearPrivateToOwner(summary);
    summary.set_priority(job.priority);
    summary.set_expected_start_time_ms(job.expected_start_ms);
    page_bytes += summary.ByteSizeLong();
    return true;
  };
  // Without --all only live jobs can qualify: skip the finished ones.
  if (request.all()) {
    for (auto it = state.jobs.upper_bound(after); it != state.jobs.end();
         ++it) {
      if (!list(it->second)) break;
    }
  } else {
    for (auto it = state.live_jobs.upper_bound(after);
         it != state.live_jobs.end(); ++it) {
      if (!list(*it->second)) break;
    }
  }
  return response;
}

}  // namespace gantry
