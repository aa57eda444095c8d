#include "daemon/controller/core/job_filter.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

// More than any command line gives (scancel -u a,b,... or a list of ids);
// each entry is tried against every job.
constexpr int kMaxFilterEntries = 10'000;

template <typename List, typename Value>
bool AllowedBy(const List& list, const Value& value) {
  return list.empty() ||
         std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

bool MatchesSelector(const v1::JobSelector& selector,
                     const v1::JobRecord& job) {
  if (selector.has_array_task_id()) {
    return job.array_job_id() == selector.job_id() &&
           job.array_task_id() == selector.array_task_id();
  }
  return job.id() == selector.job_id() ||
         job.array_job_id() == selector.job_id();
}

bool MatchesFilter(const v1::JobFilter& filter, const v1::JobRecord& job) {
  if (!AllowedBy(filter.users(), job.user())) return false;
  if (!AllowedBy(filter.names(), job.spec().name())) return false;
  if (!filter.states().empty() &&
      std::find(filter.states().begin(), filter.states().end(), job.state()) ==
          filter.states().end()) {
    return false;
  }
  if (!AllowedBy(filter.partitions(), job.spec().partition())) return false;
  return filter.jobs().empty() ||
         std::any_of(filter.jobs().begin(), filter.jobs().end(),
                     [&job](const v1::JobSelector& selector) {
                       return MatchesSelector(selector, job);
                     });
}

bool FiltersByAttributes(const v1::JobFilter& filter) {
  return !filter.users().empty() || !filter.names().empty() ||
         !filter.states().empty() || !filter.partitions().empty();
}

absl::Status CheckFilter(const v1::JobFilter& filter) {
  const int entries = filter.users_size() + filter.names_size() +
                      filter.states_size() + filter.partitions_size() +
                      filter.jobs_size();
  if (entries > kMaxFilterEntries) {
    return absl::InvalidArgumentError(
        absl::StrCat("the job filter has ", entries, " entries; the limit is ",
                     kMaxFilterEntries));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ParsePageToken(const std::string& token) {
  uint64_t after = 0;
  if (!token.empty() && !absl::SimpleAtoi(token, &after)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid page_token \"", token.substr(0, 40),
                     "\" (give the next_page_token of the previous page)"));
  }
  return after;
}

bool ActiveInWindow(const v1::JobRecord& job, int64_t start_ms, int64_t end_ms,
                    int64_t now_ms) {
  const int64_t eligible =
      std::max(job.submit_time_ms(), job.spec().begin_time_ms());
  const int64_t ended = job.end_time_ms() != 0 && job.state() != v1::PENDING &&
                                job.state() != v1::RUNNING
                            ? job.end_time_ms()
                            : std::max(now_ms, eligible);
  if (end_ms != 0 && eligible > end_ms) return false;
  return start_ms == 0 || ended >= start_ms;
}

void ClearSubmittedPayload(v1::JobSpec& spec) {
  spec.clear_script();
  spec.clear_script_args();
  spec.clear_environment();
}

void ClearPayloads(v1::JobRecord& job) {
  ClearSubmittedPayload(*job.mutable_spec());
  for (v1::StepRecord& step : *job.mutable_steps()) {
    step.clear_argv();
    step.clear_io_token();  // it lets its holder read the step's output
  }
}

void ClearPrivateToOwner(v1::JobRecord& job) {
  job.clear_submission_token();
  job.mutable_spec()->clear_datasets();
  job.clear_dataset_staging();
  job.clear_staged_ahead();
}

}  // namespace gantry
