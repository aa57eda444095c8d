// OrderQueue puts a pending queue in priority order (ties: earlier submit,
// then lower id) in place, and every job keeps all of its own fields.
#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "daemon/scheduler/priority.h"

namespace gantry {
namespace priority_order_test {

constexpr int64_t kNowMs = 1'700'000'000'000;

PendingJob Job(uint64_t id, const std::string& user, uint32_t nodes,
               int64_t submit_time_ms) {
  PendingJob job;
  job.id = JobId(id);
  job.user = user;
  job.nodes = nodes;
  job.submit_time_ms = submit_time_ms;
  // Fields that must travel with their job, not stay at a position.
  job.partition = "partition-of-" + std::to_string(id);
  job.required_nodes = {"node-of-" + std::to_string(id)};
  return job;
}

TEST_CASE("the queue is sorted by priority, then submit time, then id",
          "[priority]") {
  FairShare fair_share;
  fair_share.AddUsage("heavy", 1e6, kNowMs);
  fair_share.AddUsage("light", 1.0, kNowMs);
  const PriorityWeights weights;
  std::mt19937 random(7);
  std::vector<PendingJob> queue;
  const std::vector<std::string> users = {"heavy", "light", "new"};
  for (uint64_t id = 1; id <= 2000; ++id) {
    queue.push_back(Job(id, users[random() % users.size()],
                        1 + static_cast<uint32_t>(random() % 4),
                        kNowMs - static_cast<int64_t>(random() % 5) * 3600000));
  }
  std::shuffle(queue.begin(), queue.end(), random);

  OrderQueue(queue, fair_share, weights, kNowMs);

  REQUIRE(queue.size() == 2000);
  for (const PendingJob& job : queue) {
    CHECK(job.priority == JobPriority(job, fair_share, weights, kNowMs));
    CHECK(job.partition == "partition-of-" + std::to_string(job.id.value()));
    CHECK(
        job.required_nodes ==
        std::vector<std::string>{"node-of-" + std::to_string(job.id.value())});
  }
  CHECK(std::is_sorted(
      queue.begin(), queue.end(), [](const PendingJob& a, const PendingJob& b) {
        return std::make_tuple(-a.priority, a.submit_time_ms, a.id) <
               std::make_tuple(-b.priority, b.submit_time_ms, b.id);
      }));
  std::vector<uint64_t> ids;
  for (const PendingJob& job : queue) ids.push_back(job.id.value());
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
  CHECK(ids.front() == 1);
  CHECK(ids.back() == 2000);
}

TEST_CASE("an empty queue and a queue of one stay as they are", "[priority]") {
  const FairShare fair_share;
  std::vector<PendingJob> empty;
  OrderQueue(empty, fair_share, PriorityWeights(), kNowMs);
  CHECK(empty.empty());
  std::vector<PendingJob> one = {Job(5, "alice", 1, kNowMs)};
  OrderQueue(one, fair_share, PriorityWeights(), kNowMs);
  REQUIRE(one.size() == 1);
  CHECK(one[0].id == JobId(5));
  CHECK(one[0].partition == "partition-of-5");
}

}  // namespace priority_order_test
}  // namespace gantry
