#include "daemon/priority.h"

#include <algorithm>
#include <cmath>

namespace gantry {

double FairShare::ValueAt(const Decayed& d, int64_t now_ms) const {
  if (half_life_ms_ <= 0 || now_ms <= d.at_ms) return d.value;
  return d.value *
         std::exp2(-static_cast<double>(now_ms - d.at_ms) / half_life_ms_);
}

void FairShare::AddUsage(const std::string& user, double usage,
                         int64_t now_ms) {
  if (usage <= 0) return;
  Decayed& d = usage_[user];
  d.value = ValueAt(d, now_ms) + usage;
  d.at_ms = std::max(d.at_ms, now_ms);
  total_.value = ValueAt(total_, now_ms) + usage;
  total_.at_ms = std::max(total_.at_ms, now_ms);
}

double FairShare::Share(const std::string& user, int64_t now_ms) const {
  auto it = usage_.find(user);
  const double total = ValueAt(total_, now_ms);
  if (it == usage_.end() || total <= 0) return 0;
  return std::clamp(ValueAt(it->second, now_ms) / total, 0.0, 1.0);
}

double FairShare::Factor(const std::string& user, int64_t now_ms) const {
  if (usage_.empty()) return 1;
  // Share / (1 / users) == usage / mean usage; the ratio is decay-invariant.
  const double relative = Share(user, now_ms) * usage_.size();
  return std::exp2(-relative);
}

double JobPriority(const PendingJob& job, const FairShare& fair_share,
                   const PriorityWeights& weights, int64_t now_ms) {
  const double age =
      weights.age_max_ms <= 0
          ? 0
          : std::clamp(static_cast<double>(now_ms - job.submit_time_ms) /
                           weights.age_max_ms,
                       0.0, 1.0);
  const double gpus =
      static_cast<double>(job.nodes) * std::max<uint32_t>(job.gpus_per_node, 1);
  const double size = weights.size_norm_gpus <= 0
                          ? 0
                          : std::min(1.0, gpus / weights.size_norm_gpus);
  return weights.age_weight * age + weights.size_weight * size +
         weights.fair_share_weight * fair_share.Factor(job.user, now_ms);
}

void OrderQueue(std::vector<PendingJob>& queue, const FairShare& fair_share,
                const PriorityWeights& weights, int64_t now_ms) {
  for (PendingJob& job : queue) {
    job.priority = JobPriority(job, fair_share, weights, now_ms);
  }
  std::stable_sort(queue.begin(), queue.end(),
                   [](const PendingJob& a, const PendingJob& b) {
                     if (a.priority != b.priority)
                       return a.priority > b.priority;
                     if (a.submit_time_ms != b.submit_time_ms)
                       return a.submit_time_ms < b.submit_time_ms;
                     return a.id < b.id;
                   });
}

}  // namespace gantry
