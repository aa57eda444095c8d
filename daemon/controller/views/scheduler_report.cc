#include "daemon/controller/views/scheduler_report.h"

#include <algorithm>
#include <vector>

#include "daemon/controller/core/scheduling_input.h"

namespace gantry {

v1::SchedulerReportResponse SchedulerReport(
    const SchedulerReportSources& sources, int64_t now_ms) {
  v1::SchedulerReportResponse response;
  response.set_now_ms(now_ms);
  response.set_started_ms(sources.started_ms);
  const PriorityWeights& weights = sources.weights;
  v1::PriorityWeightsInfo& info = *response.mutable_weights();
  info.set_age(weights.age_weight);
  info.set_job_size(weights.size_weight);
  info.set_fair_share(weights.fair_share_weight);
  uint32_t pending = 0;
  uint32_t running = 0;
  std::vector<v1::PriorityFactors> factors;
  for (const auto& [id, job] : sources.state.live_jobs) {
    const v1::JobRecord& record = job->record;
    if (record.state() == v1::RUNNING) ++running;
    if (record.state() != v1::PENDING) continue;
    ++pending;
    const PriorityFactors f = JobPriorityFactors(
        PendingJobOf(record, nullptr), sources.fair_share, weights, now_ms);
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
  const FairShare& fair_share = sources.fair_share;
  for (const auto& [user, usage] : fair_share.users()) {
    v1::UserShare& share = *response.add_shares();
    share.set_user(user);
    share.set_raw_usage(fair_share.Usage(user, now_ms));
    share.set_effective_usage(fair_share.Share(user, now_ms));
    share.set_fair_share(fair_share.Factor(user, now_ms));
  }
  response.set_users_seen(static_cast<uint32_t>(fair_share.users().size()));
  const ControllerStatistics& statistics = sources.statistics;
  response.set_jobs_submitted(statistics.jobs_submitted);
  response.set_jobs_started(statistics.jobs_started);
  response.set_jobs_completed(statistics.jobs_completed);
  response.set_jobs_failed(statistics.jobs_failed);
  response.set_jobs_cancelled(statistics.jobs_cancelled);
  response.set_jobs_pending(pending);
  response.set_jobs_running(running);
  response.set_schedule_cycles(statistics.cycles);
  response.set_schedule_cycle_last_us(statistics.cycle_last_us);
  response.set_schedule_cycle_max_us(statistics.cycle_max_us);
  response.set_schedule_cycle_mean_us(
      statistics.cycles == 0 ? 0
                             : statistics.cycle_total_us / statistics.cycles);
  response.set_last_cycle_ms(statistics.last_cycle_ms);
  return response;
}

}  // namespace gantry
