#include "daemon/replication/log_truncation_policy.h"

#include <catch2/catch.hpp>

namespace gantry::replication {
namespace log_truncation_policy_test {

TEST_CASE("without a standby the log is never truncated",
          "[replication][truncation]") {
  CHECK_FALSE(TruncationTarget({.leader_index = 50'000,
                                .truncated_through = 0,
                                .standby_applied = {},
                                .retain = 100}));
}

TEST_CASE("the log is truncated behind the slowest standby, minus retain",
          "[replication][truncation]") {
  CHECK(TruncationTarget({.leader_index = 1000,
                          .truncated_through = 0,
                          .standby_applied = {990, 700},
                          .retain = 100}) == 600u);
  // The leader itself may be the slowest (a standby's record is fresher).
  CHECK(TruncationTarget({.leader_index = 500,
                          .truncated_through = 0,
                          .standby_applied = {900},
                          .retain = 100}) == 400u);
}

TEST_CASE("nothing is truncated twice, nor within the retained tail",
          "[replication][truncation]") {
  CHECK_FALSE(TruncationTarget({.leader_index = 1000,
                                .truncated_through = 600,
                                .standby_applied = {700},
                                .retain = 100}));
  CHECK_FALSE(TruncationTarget({.leader_index = 90,
                                .truncated_through = 0,
                                .standby_applied = {90},
                                .retain = 100}));
  CHECK(TruncationTarget({.leader_index = 1000,
                          .truncated_through = 600,
                          .standby_applied = {702},
                          .retain = 100}) == 602u);
}

TEST_CASE("a standby already behind the truncation holds nothing back",
          "[replication][truncation]") {
  // It needs a copy of the leader's state anyway, and does not count as
  // a copy of the log either.
  CHECK(TruncationTarget({.leader_index = 2000,
                          .truncated_through = 600,
                          .standby_applied = {10, 1900},
                          .retain = 100}) == 1800u);
  CHECK_FALSE(TruncationTarget({.leader_index = 2000,
                                .truncated_through = 600,
                                .standby_applied = {10},
                                .retain = 100}));
}

TEST_CASE("retain 0 truncates everything every copy holds",
          "[replication][truncation]") {
  CHECK(TruncationTarget({.leader_index = 10,
                          .truncated_through = 0,
                          .standby_applied = {10},
                          .retain = 0}) == 10u);
}

}  // namespace log_truncation_policy_test
}  // namespace gantry::replication
