// Controller: accounting (sacct, sreport) and the scheduler's report
// (sprio, sshare, sdiag). A page of accounting is filled on the loop from
// the live state and the records retired but not yet written, then handed
// to the history thread, which merges it with the history read from a
// database snapshot and answers the caller from there: the loop's part
// is bounded by the live state, never by the history.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "daemon/controller/accounting_page.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/core/job_filter.h"

namespace gantry {

void Controller::Accounting(
    const v1::AccountingRequest& request, const Caller& caller,
    std::function<void(absl::StatusOr<v1::AccountingResponse>)> done) {
  if (absl::Status valid = CheckFilter(request.filter()); !valid.ok()) {
    return done(valid);
  }
  absl::StatusOr<uint64_t> token = ParsePageToken(request.page_token());
  if (!token.ok()) return done(token.status());
  uint64_t after = *token;
  if (request.start_ms() < 0 || request.end_ms() < 0 ||
      (request.end_ms() != 0 && request.end_ms() < request.start_ms())) {
    return done(absl::InvalidArgumentError(
        "the time window ends before it starts (sacct -S after -E)"));
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
  auto page = std::make_shared<AccountingPage>(request, caller, clock_.NowMs(),
                                               after, limits);
  page->response().set_cluster_name(options_.cluster_name);
  // Retired in memory, not yet written: in neither core_.state.jobs nor the
  // store.
  std::map<uint64_t, const v1::JobRecord*> retired;
  for (const StateStore::Batch* pending : core_.commits.Unwritten()) {
    if (pending == nullptr) continue;
    for (const v1::JobRecord& record : pending->retired) {
      if (record.id() > after) retired.emplace(record.id(), &record);
    }
  }
  auto live = core_.state.jobs.upper_bound(after);
  auto unwritten = retired.begin();
  uint64_t last_seen = after;
  while (true) {
    // The lower id of the two sources.
    const v1::JobRecord* next = nullptr;
    const JobRuntime* runtime = nullptr;
    if (live != core_.state.jobs.end()) {
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
    if (next->id() <= last_seen || !page->Qualifies(*next)) continue;
    last_seen = next->id();
    v1::JobRecord row = page->RowOf(*next);
    if (runtime != nullptr && next->state() == v1::RUNNING) {
      for (const auto& [node, sample] : runtime->usage) {
        if (sample.attempt() == next->attempt()) *row.add_live_usage() = sample;
      }
    }
    if (!page->Add(std::move(row))) break;
  }
  // The history part, off the loop. Others' records are passed over
  // unread unless an admin asks.
  auto answer = std::make_shared<
      std::function<void(absl::StatusOr<v1::AccountingResponse>)>>(
      std::move(done));
  const bool queued =
      history_worker_.Post([this, page, answer](bool cancelled) {
        if (cancelled) {
          return (*answer)(
              absl::UnavailableError("the controller is stopping; ask again"));
        }
        std::unique_ptr<StateStore::HistoryCursor> cursor = store_.ReadHistory(
            page->after() + 1,
            page->caller().admin ? std::nullopt
                                 : std::optional<uint32_t>(page->caller().uid));
        (*answer)(std::move(*page).MergeHistory(*cursor));
      });
  if (!queued) {
    (*answer)(absl::UnavailableError(
        "too many accounting queries are in progress; ask again shortly"));
  }
}

v1::SchedulerReportResponse Controller::SchedulerReport() const {
  const int64_t now = clock_.NowMs();
  v1::SchedulerReportResponse response;
  response.set_now_ms(now);
  response.set_started_ms(started_ms_);
  const PriorityWeights& weights = options_.priority_weights;
  v1::PriorityWeightsInfo& info = *response.mutable_weights();
  info.set_age(weights.age_weight);
  info.set_job_size(weights.size_weight);
  info.set_fair_share(weights.fair_share_weight);
  uint32_t pending = 0;
  uint32_t running = 0;
  std::vector<v1::PriorityFactors> factors;
  for (const auto& [id, job] : core_.state.live_jobs) {
    const v1::JobRecord& record = job->record;
    if (record.state() == v1::RUNNING) ++running;
    if (record.state() != v1::PENDING) continue;
    ++pending;
    const PriorityFactors f =
        JobPriorityFactors(PendingJobOf(record, nullptr),
                           core_.lifecycle.fair_share(), weights, now);
    v1::PriorityFactors& row = factors.emplace_back();
    row.set_job_id(id);
    row.set_user(record.user());
    row.set_partition(record.spec().partition());
    row.set_age(f.age);
    row.set_job_size(f.job_size);
    row.set_fair_share(f.fair_share);
    row.set_priority(weights.age_weight * f.age +
                     weights.size_weight * f.job_size +
                     weights.fair_share_weight * f.fair_share);
    row.set_array_job_id(record.array_job_id());
    row.set_array_task_id(record.array_task_id());
  }
  std::stable_sort(
      factors.begin(), factors.end(),
      [](const v1::PriorityFactors& a, const v1::PriorityFactors& b) {
        return a.priority() > b.priority();
      });
  for (v1::PriorityFactors& row : factors) {
    *response.add_pending() = std::move(row);
  }
  for (const auto& [user, usage] : core_.lifecycle.fair_share().users()) {
    v1::UserShare& share = *response.add_shares();
    share.set_user(user);
    share.set_raw_usage(core_.lifecycle.fair_share().Usage(user, now));
    share.set_effective_usage(core_.lifecycle.fair_share().Share(user, now));
    share.set_fair_share(core_.lifecycle.fair_share().Factor(user, now));
  }
  response.set_users_seen(
      static_cast<uint32_t>(core_.lifecycle.fair_share().users().size()));
  response.set_jobs_submitted(core_.statistics.jobs_submitted);
  response.set_jobs_started(core_.statistics.jobs_started);
  response.set_jobs_completed(core_.statistics.jobs_completed);
  response.set_jobs_failed(core_.statistics.jobs_failed);
  response.set_jobs_cancelled(core_.statistics.jobs_cancelled);
  response.set_jobs_pending(pending);
  response.set_jobs_running(running);
  response.set_schedule_cycles(core_.statistics.cycles);
  response.set_schedule_cycle_last_us(core_.statistics.cycle_last_us);
  response.set_schedule_cycle_max_us(core_.statistics.cycle_max_us);
  response.set_schedule_cycle_mean_us(core_.statistics.cycles == 0
                                          ? 0
                                          : core_.statistics.cycle_total_us /
                                                core_.statistics.cycles);
  response.set_last_cycle_ms(core_.statistics.last_cycle_ms);
  return response;
}

}  // namespace gantry
