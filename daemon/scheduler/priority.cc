#include "daemon/scheduler/priority.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

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

double FairShare::Usage(const std::string& user, int64_t now_ms) const {
  auto it = usage_.find(user);
  return it == usage_.end() ? 0 : ValueAt(it->second, now_ms);
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

namespace {

PriorityFactors FactorsWith(const PendingJob& job, double fair_share_factor,
                            const PriorityWeights& weights, int64_t now_ms) {
  PriorityFactors factors;
  factors.age =
      weights.age_max_ms <= 0
          ? 0
          : std::clamp(static_cast<double>(now_ms - job.submit_time_ms) /
                           weights.age_max_ms,
                       0.0, 1.0);
  const double gpus =
      static_cast<double>(job.nodes) * std::max<uint32_t>(job.gpus_per_node, 1);
  factors.job_size = weights.size_norm_gpus <= 0
                         ? 0
                         : std::min(1.0, gpus / weights.size_norm_gpus);
  factors.fair_share = fair_share_factor;
  return factors;
}

double PriorityWithFactor(const PendingJob& job, double fair_share_factor,
                          const PriorityWeights& weights, int64_t now_ms) {
  const PriorityFactors f =
      FactorsWith(job, fair_share_factor, weights, now_ms);
  return weights.age_weight * f.age + weights.size_weight * f.job_size +
         weights.fair_share_weight * f.fair_share;
}

}  // namespace

PriorityFactors JobPriorityFactors(const PendingJob& job,
                                   const FairShare& fair_share,
                                   const PriorityWeights& weights,
                                   int64_t now_ms) {
  return FactorsWith(job, fair_share.Factor(job.user, now_ms), weights, now_ms);
}

double JobPriority(const PendingJob& job, const FairShare& fair_share,
                   const PriorityWeights& weights, int64_t now_ms) {
  return PriorityWithFactor(job, fair_share.Factor(job.user, now_ms), weights,
                            now_ms);
}

void OrderQueue(std::vector<PendingJob>& queue, const FairShare& fair_share,
                const PriorityWeights& weights, int64_t now_ms) {
  // A queue holds few users and many jobs: each user's factor once.
  std::unordered_map<std::string_view, double> factors;
  // Sorting small keys and then moving each job once is far cheaper than
  // sorting the jobs themselves on a long queue.
  struct Key {
    double priority;
    int64_t submit_time_ms;
    JobId id;
    std::size_t index;
  };
  std::vector<Key> keys;
  keys.reserve(queue.size());
  for (std::size_t i = 0; i < queue.size(); ++i) {
    PendingJob& job = queue[i];
    auto [factor, fresh] = factors.try_emplace(job.user, 0.0);
    if (fresh) factor->second = fair_share.Factor(job.user, now_ms);
    job.priority = PriorityWithFactor(job, factor->second, weights, now_ms);
    keys.push_back({job.priority, job.submit_time_ms, job.id, i});
  }
  // Ids are unique, so the order is total and a plain sort is stable.
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.submit_time_ms != b.submit_time_ms) {
      return a.submit_time_ms < b.submit_time_ms;
    }
    return a.id < b.id;
  });
  // Into that order in place, one cycle of the permutation at a time: a
  // second queue would be fresh memory (megabytes for a long queue) that
  // every pass faults in again.
  std::vector<bool> placed(queue.size(), false);
  for (std::size_t start = 0; start < queue.size(); ++start) {
    if (placed[start]) continue;
    PendingJob displaced = std::move(queue[start]);
    std::size_t position = start;
    while (true) {
      placed[position] = true;
      const std::size_t from = keys[position].index;
      if (from == start) {
        queue[position] = std::move(displaced);
        break;
      }
      queue[position] = std::move(queue[from]);
      position = from;
    }
  }
}

}  // namespace gantry
