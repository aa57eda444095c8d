#include "daemon/controller/views/live_accounting.h"

#include <algorithm>
#include <limits>
#include <map>

#include "daemon/controller/core/job_filter.h"
#include "daemon/controller/views/job_summary.h"
#include "daemon/store/state_store.h"

namespace gantry {

absl::StatusOr<AccountingPage> LiveAccountingPage(
    const v1::AccountingRequest& request, const Caller& caller, int64_t now_ms,
    const std::string& cluster_name, const ClusterState& state,
    const CommitPipeline& commits) {
  if (absl::Status valid = CheckFilter(request.filter()); !valid.ok()) {
    return valid;
  }
  absl::StatusOr<uint64_t> token = ParsePageToken(request.page_token());
  if (!token.ok()) return token.status();
  uint64_t after = *token;
  if (request.start_ms() < 0 || request.end_ms() < 0 ||
      (request.end_ms() != 0 && request.end_ms() < request.start_ms())) {
    return absl::InvalidArgumentError(
        "the time window ends before it starts (sacct -S after -E)");
  }
  // Jobs named by id: nothing below the smallest id can match (an array's
  // tasks have ids from the array's up).
  if (!request.filter().jobs().empty()) {
    uint64_t lowest = std::numeric_limits<uint64_t>::max();
    for (const v1::JobSelector& selector : request.filter().jobs()) {
      lowest = std::min(lowest, selector.job_id());
    }
    if (lowest > 0) after = std::max(after, lowest - 1);
  }
  AccountingPage::Limits limits;
  if (request.page_size() != 0) {
    limits.jobs = std::min(request.page_size(), limits.jobs);
  }
  AccountingPage page(request, caller, now_ms, after, limits);
  page.response().set_cluster_name(cluster_name);
  // Retired in memory, not yet written: in neither state.jobs nor the
  // store.
  std::map<uint64_t, const v1::JobRecord*> retired;
  for (const StateStore::Batch* pending : commits.Unwritten()) {
    if (pending == nullptr) continue;
    for (const v1::JobRecord& record : pending->retired) {
      if (record.id() > after) retired.emplace(record.id(), &record);
    }
  }
  auto live = state.jobs.upper_bound(after);
  auto unwritten = retired.begin();
  uint64_t last_seen = after;
  while (true) {
    // The lower id of the two sources.
    const v1::JobRecord* next = nullptr;
    const JobRuntime* runtime = nullptr;
    if (live != state.jobs.end()) {
      next = &live->second.record;
      runtime = &live->second;
    }
    if (unwritten != retired.end() &&
        (next == nullptr || unwritten->first < next->id())) {
      next = unwritten->second;
      runtime = nullptr;
    }
    if (next == nullptr) break;
    if (runtime != nullptr) {
      ++live;
    } else {
      ++unwritten;
    }
    // A batch being written may land while the loop reads: listed once.
    if (next->id() <= last_seen || !page.Qualifies(*next)) continue;
    last_seen = next->id();
    v1::JobRecord row = page.RowOf(JobSummaryOf(*next));
    if (runtime != nullptr && next->state() == v1::RUNNING) {
      for (const auto& [node, sample] : runtime->usage) {
        if (sample.attempt() == next->attempt()) *row.add_live_usage() = sample;
      }
    }
    if (!page.Add(std::move(row))) break;
  }
  return page;
}

}  // namespace gantry
