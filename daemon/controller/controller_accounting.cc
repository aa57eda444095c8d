// Controller: accounting (sacct, sreport) and the scheduler's report
// (sprio, sshare, sdiag). Accounting merges the live state, the records
// retired but not yet written and the history column family in id order,
// reading a bounded part of the history per call, so a query over months of
// jobs costs many short calls rather than one long stall of the loop.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/job_filter.h"

namespace gantry {
namespace {

constexpr uint32_t kMaxPageJobs = 5000;
constexpr size_t kMaxPageBytes = 4 << 20;
// History records read per call: a few milliseconds of the loop.
constexpr size_t kHistoryScanPerCall = 5000;

}  // namespace

absl::StatusOr<v1::AccountingResponse> Controller::Accounting(
    const v1::AccountingRequest& request, const Caller& caller) const {
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
  const uint32_t page_size = request.page_size() == 0
                                 ? kMaxPageJobs
                                 : std::min(request.page_size(), kMaxPageJobs);
  absl::StatusOr<std::vector<v1::JobRecord>> history =
      store_.HistoryJobs(after + 1, kHistoryScanPerCall);
  if (!history.ok()) return history.status();
  // With the history read only up to `horizon`, the other sources are too;
  // the next page goes on from there.
  const bool history_cut = history->size() >= kHistoryScanPerCall;
  const uint64_t horizon =
      history_cut ? history->back().id() : std::numeric_limits<uint64_t>::max();
  // Retired in memory, not yet written: in neither jobs_ nor the store.
  std::map<uint64_t, const v1::JobRecord*> retired;
  for (const StateStore::Batch* pending : {&batch_, writer_.in_flight()}) {
    if (pending == nullptr) continue;
    for (const v1::JobRecord& record : pending->retired) {
      if (record.id() > after && record.id() <= horizon) {
        retired.emplace(record.id(), &record);
      }
    }
  }
  const int64_t now = clock_.NowMs();
  v1::AccountingResponse response;
  response.set_cluster_name(options_.cluster_name);
  size_t page_bytes = 0;
  uint64_t last_seen = after;
  // False once the page is full.
  auto offer = [&](const v1::JobRecord& record, const JobRuntime* runtime) {
    if (!caller.MayManage(record.uid())) return true;
    if (!MatchesFilter(request.filter(), record)) return true;
    if (!ActiveInWindow(record, request.start_ms(), request.end_ms(), now)) {
      return true;
    }
    if (response.jobs_size() >= static_cast<int>(page_size) ||
        page_bytes >= kMaxPageBytes) {
      return false;
    }
    v1::JobRecord& copy = *response.add_jobs();
    copy = record;
    v1::JobSpec& spec = *copy.mutable_spec();
    spec.clear_script();
    spec.clear_script_args();
    spec.clear_environment();
    if (runtime != nullptr && record.state() == v1::RUNNING) {
      for (const auto& [node, sample] : runtime->usage) {
        if (sample.attempt() == record.attempt()) {
          *copy.add_live_usage() = sample;
        }
      }
    }
    page_bytes += copy.ByteSizeLong();
    return true;
  };
  auto live = jobs_.upper_bound(after);
  auto stored = history->begin();
  auto unwritten = retired.begin();
  bool full = false;
  while (!full) {
    // The lowest id of the three sources, up to the horizon.
    const v1::JobRecord* next = nullptr;
    const JobRuntime* runtime = nullptr;
    int source = -1;
    if (live != jobs_.end() && live->first <= horizon) {
      next = &live->second.record;
      runtime = &live->second;
      source = 0;
    }
    if (stored != history->end() &&
        (next == nullptr || stored->id() < next->id())) {
      next = &*stored;
      runtime = nullptr;
      source = 1;
    }
    if (unwritten != retired.end() &&
        (next == nullptr || unwritten->first < next->id())) {
      next = unwritten->second;
      runtime = nullptr;
      source = 2;
    }
    if (next == nullptr) break;
    // A batch being written may land in the store while it is read: the
    // job is then in both, and listed once.
    if (next->id() > last_seen) {
      if (!offer(*next, runtime)) {
        full = true;
        break;
      }
      last_seen = next->id();
    }
    if (source == 0) ++live;
    if (source == 1) ++stored;
    if (source == 2) ++unwritten;
  }
  if (full || history_cut) {
    response.set_next_page_token(absl::StrCat(last_seen));
  }
  return response;
}

void Controller::RecordUsage(const std::string& node,
                             const v1::Heartbeat& heartbeat) {
  for (const v1::JobUsageSample& sample : heartbeat.job_usage()) {
    auto it = jobs_.find(sample.job_id());
    if (it == jobs_.end()) continue;
    JobRuntime& job = it->second;
    if (job.record.state() != v1::RUNNING ||
        job.record.attempt() != sample.attempt() ||
        std::none_of(job.record.allocation().begin(),
                     job.record.allocation().end(),
                     [&](const v1::NodeAllocation& share) {
                       return share.node() == node;
                     })) {
      continue;
    }
    v1::JobUsageSample& kept = job.usage[node];
    kept = sample;
    kept.set_node(node);  // the stream's node, whatever the sample says
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
  for (const auto& [id, job] : live_jobs_) {
    const v1::JobRecord& record = job->record;
    if (record.state() == v1::RUNNING) ++running;
    if (record.state() != v1::PENDING) continue;
    ++pending;
    const PriorityFactors f = JobPriorityFactors(PendingJobOf(record, nullptr),
                                                 fair_share_, weights, now);
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
  for (const auto& [user, usage] : fair_share_.users()) {
    v1::UserShare& share = *response.add_shares();
    share.set_user(user);
    share.set_raw_usage(fair_share_.Usage(user, now));
    share.set_effective_usage(fair_share_.Share(user, now));
    share.set_fair_share(fair_share_.Factor(user, now));
  }
  response.set_users_seen(static_cast<uint32_t>(fair_share_.users().size()));
  response.set_jobs_submitted(statistics_.jobs_submitted);
  response.set_jobs_started(statistics_.jobs_started);
  response.set_jobs_completed(statistics_.jobs_completed);
  response.set_jobs_failed(statistics_.jobs_failed);
  response.set_jobs_cancelled(statistics_.jobs_cancelled);
  response.set_jobs_pending(pending);
  response.set_jobs_running(running);
  response.set_schedule_cycles(statistics_.cycles);
  response.set_schedule_cycle_last_us(statistics_.cycle_last_us);
  response.set_schedule_cycle_max_us(statistics_.cycle_max_us);
  response.set_schedule_cycle_mean_us(statistics_.cycles == 0
                                          ? 0
                                          : statistics_.cycle_total_us /
                                                statistics_.cycles);
  response.set_last_cycle_ms(statistics_.last_cycle_ms);
  return response;
}

}  // namespace gantry
