// Job priority: a pure function of a pending job, the users' past usage and
// the weights. Thread-compatible: FairShare is a plain value with no locks;
// the controller owns one on its loop thread, the simulator its own.
//
// Formula (each factor in [0, 1]):
//   priority = age_weight       * min(1, (now - submit) / age_max_ms)
//            + size_weight      * min(1, job_gpus / size_norm_gpus)
//            + fair_share_weight * 2^(-usage(user) / mean_usage)
// where job_gpus = nodes * max(gpus_per_node, 1) (a CPU-only node counts as
// one), usage(user) is the user's GPU-seconds (CPU-seconds for CPU-only jobs)
// decayed with a half-life (usage from one half-life ago counts half), and
// mean_usage is the decayed total divided by the number of users seen. A
// user with no usage gets factor 1, one with exactly the mean 0.5 (Slurm's
// classic fair-share factor with equal shares).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/scheduler/scheduler_types.h"

namespace gantry {

struct PriorityWeights {
  double age_weight = 1000;
  double size_weight = 1000;
  double fair_share_weight = 10000;
  int64_t age_max_ms = 7LL * 24 * 3600 * 1000;    // age factor saturates
  double size_norm_gpus = 512;                    // size factor saturates
  int64_t half_life_ms = 7LL * 24 * 3600 * 1000;  // usage decay
};

class FairShare {
 public:
  explicit FairShare(int64_t half_life_ms = 7LL * 24 * 3600 * 1000)
      : half_life_ms_(half_life_ms) {}

  // Adds usage (GPU-seconds, or CPU-seconds for CPU-only work) at now_ms.
  // Times must not go backwards by more than rounding; earlier times decay
  // nothing.
  void AddUsage(const std::string& user, double usage, int64_t now_ms);

  // The user's decayed usage at now_ms; 0 for an unknown user.
  double Usage(const std::string& user, int64_t now_ms) const;

  // The user's share of all decayed usage, in [0, 1]; 0 for an unknown user
  // or when nobody used anything.
  double Share(const std::string& user, int64_t now_ms) const;

  // 2^(-usage / mean usage per user), in (0, 1]; 1 with no usage at all.
  double Factor(const std::string& user, int64_t now_ms) const;

  // Usage as of a time (decaying from then on): what is stored of a
  // FairShare and given back to Restore after a restart.
  struct Decayed {
    double value = 0;
    int64_t at_ms = 0;
  };
  const std::map<std::string, Decayed>& users() const { return usage_; }
  const Decayed& total() const { return total_; }
  // Replaces the usage with what users() and total() said.
  void Restore(std::map<std::string, Decayed> users, Decayed total) {
    usage_ = std::move(users);
    total_ = total;
  }

 private:
  double ValueAt(const Decayed& d, int64_t now_ms) const;

  int64_t half_life_ms_;
  std::map<std::string, Decayed> usage_;
  Decayed total_;
};

// The factors of the formula above, each in [0, 1], before weighting.
struct PriorityFactors {
  double age = 0;
  double job_size = 0;
  double fair_share = 0;
};
PriorityFactors JobPriorityFactors(const PendingJob& job,
                                   const FairShare& fair_share,
                                   const PriorityWeights& weights,
                                   int64_t now_ms);

double JobPriority(const PendingJob& job, const FairShare& fair_share,
                   const PriorityWeights& weights, int64_t now_ms);

// Sets each job's priority and sorts the queue: highest priority first,
// ties by earlier submit time, then lower id.
void OrderQueue(std::vector<PendingJob>& queue, const FairShare& fair_share,
                const PriorityWeights& weights, int64_t now_ms);

}  // namespace gantry
