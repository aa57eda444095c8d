// The pre-flight verdict: which nodes of a gang are swapped out, from
// what each reported (daemon/scheduler/preflight_verdict.h).
#include "daemon/scheduler/preflight_verdict.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace preflight_verdict_test {

// `n` healthy nodes n0..n{n-1}, every link at `mbps`.
std::vector<PreflightNodeReport> Healthy(int n, double mbps = 1000) {
  std::vector<PreflightNodeReport> reports;
  for (int i = 0; i < n; ++i) {
    PreflightNodeReport report;
    report.node = absl::StrCat("n", i);
    report.answered = true;
    report.passed = true;
    report.send_mbps = mbps;
    report.receive_mbps = mbps;
    report.round_trip_us = 50;
    reports.push_back(report);
  }
  return reports;
}

std::vector<std::string> Rejected(const PreflightVerdict& verdict) {
  std::vector<std::string> nodes;
  for (const PreflightRejection& r : verdict.rejected) nodes.push_back(r.node);
  return nodes;
}

TEST_CASE("a healthy gang passes and its medians are reported") {
  std::vector<PreflightNodeReport> reports = Healthy(8);
  reports[3].receive_mbps = 900;
  const PreflightVerdict verdict = JudgePreflight(reports, 0.5, 10000);
  CHECK(verdict.rejected.empty());
  CHECK(verdict.degraded.empty());
  CHECK(verdict.median_link_mbps == 1000);
  CHECK(verdict.median_round_trip_us == 50);
}

TEST_CASE("a node whose own check failed is rejected with its problem") {
  std::vector<PreflightNodeReport> reports = Healthy(4);
  reports[2].passed = false;
  reports[2].problem = "site check exited with code 1";
  const PreflightVerdict verdict = JudgePreflight(reports, 0.5, 10000);
  REQUIRE(Rejected(verdict) == std::vector<std::string>{"n2"});
  CHECK(verdict.rejected[0].reason ==
        "pre-flight: site check exited with code 1");
}

TEST_CASE("a node that did not answer is rejected, its neighbours are not") {
  std::vector<PreflightNodeReport> reports = Healthy(4);
  reports[1] = PreflightNodeReport();
  reports[1].node = "n1";
  // Its neighbours saw the links to and from it fail.
  reports[0].send_problem = "connection refused";
  reports[2].receive_problem = "nothing arrived";
  const PreflightVerdict verdict = JudgePreflight(reports, 0.5, 12000);
  REQUIRE(Rejected(verdict) == std::vector<std::string>{"n1"});
  CHECK(verdict.rejected[0].reason == "pre-flight: no answer within 12 s");
}

TEST_CASE(
    "a slow node is the one whose two links are both slow: degraded, "
    "not rejected") {
  std::vector<PreflightNodeReport> reports = Healthy(6);
  // n4's NIC is slow: its send to n5 and its receive from n3.
  reports[4].send_mbps = 100;
  reports[4].receive_mbps = 100;
  reports[5].receive_mbps = 100;
  reports[3].send_mbps = 100;
  const PreflightVerdict verdict = JudgePreflight(reports, 0.5, 10000);
  // Bandwidth alone swaps nobody out: the job starts, the verdict says why
  // n4 is degraded, and the next pre-flight measures it again.
  CHECK(verdict.rejected.empty());
  REQUIRE(verdict.degraded.size() == 1);
  CHECK(verdict.degraded[0].node == "n4");
  CHECK_THAT(verdict.degraded[0].reason,
             Catch::Contains("both ring links slow") &&
                 Catch::Contains("below 0.5 x the gang's median 1000 MB/s"));
}

TEST_CASE("a slow link next to a broken one still rejects the node") {
  std::vector<PreflightNodeReport> reports = Healthy(6);
  reports[4].send_problem = "connection reset";
  reports[4].receive_mbps = 100;
  reports[3].send_mbps = 100;
  const PreflightVerdict verdict = JudgePreflight(reports, 0.5, 10000);
  CHECK(Rejected(verdict) == std::vector<std::string>{"n4"});
  CHECK(verdict.degraded.empty());
}

TEST_CASE("a figure above the factor times the median is not slow") {
  std::vector<PreflightNodeReport> reports = Healthy(6);
  reports[3].send_mbps = reports[4].receive_mbps = 600;
  reports[4].send_mbps = reports[5].receive_mbps = 600;
  CHECK(JudgePreflight(reports, 0.5, 10000).degraded.empty());
  // The factor is the admin's: a stricter one catches it.
  const PreflightVerdict strict = JudgePreflight(reports, 0.7, 10000);
  REQUIRE(strict.degraded.size() == 1);
  CHECK(strict.degraded[0].node == "n4");
  // 0 turns the slowness test off.
  reports[3].send_mbps = reports[4].receive_mbps = 1;
  reports[4].send_mbps = reports[5].receive_mbps = 1;
  const PreflightVerdict off = JudgePreflight(reports, 0, 10000);
  CHECK(off.rejected.empty());
  CHECK(off.degraded.empty());
}

TEST_CASE("a link is as fast as the better of its two ends' timings") {
  std::vector<PreflightNodeReport> reports = Healthy(6);
  // n2's clock stalled while it received: n1's send says the link is fine.
  reports[2].receive_mbps = 50;
  const PreflightVerdict verdict = JudgePreflight(reports, 0.5, 10000);
  CHECK(verdict.rejected.empty());
  CHECK(verdict.degraded.empty());
  CHECK(verdict.median_link_mbps == 1000);
}

TEST_CASE("one slow link alone blames nobody") {
  std::vector<PreflightNodeReport> reports = Healthy(6);
  reports[2].send_mbps = reports[3].receive_mbps = 100;
  const PreflightVerdict verdict = JudgePreflight(reports, 0.5, 10000);
  CHECK(verdict.rejected.empty());
  CHECK(verdict.degraded.empty());
}

TEST_CASE("one broken link with both ends otherwise fine rejects both ends") {
  std::vector<PreflightNodeReport> reports = Healthy(5);
  reports[1].send_problem = "connection reset";
  const PreflightVerdict verdict = JudgePreflight(reports, 0.5, 10000);
  CHECK(Rejected(verdict) == std::vector<std::string>{"n1", "n2"});
  CHECK_THAT(verdict.rejected[0].reason,
             Catch::Contains("n1 -> n2: connection reset"));
}

TEST_CASE("a transfer the receiver's listener never took blames nobody") {
  // Its port held by others' connections: the path works (TCP connected),
  // and neither node's network is shown to be bad.
  for (int n : {2, 4}) {
    std::vector<PreflightNodeReport> reports = Healthy(n);
    reports[0].send_problem =
        "the pre-flight listener of n1 did not take the transfer";
    reports[0].send_not_taken = true;
    reports[0].send_mbps = 0;
    reports[1].receive_problem = "nothing arrived from n0 in time";
    reports[1].receive_mbps = 0;
    CHECK(JudgePreflight(reports, 0.5, 10000).rejected.empty());
  }
  // A node whose own links both broke otherwise is still rejected.
  std::vector<PreflightNodeReport> reports = Healthy(5);
  reports[0].send_not_taken = true;
  reports[0].send_problem = "not taken";
  reports[2].send_problem = "connection reset";
  reports[2].receive_problem = "nothing arrived from n1 in time";
  CHECK(Rejected(JudgePreflight(reports, 0.5, 10000)) ==
        std::vector<std::string>{"n2"});
}

TEST_CASE("two nodes: no median, but a broken link still fails both") {
  std::vector<PreflightNodeReport> reports = Healthy(2);
  reports[1].receive_mbps = 1;  // slow, but nobody can tell which is normal
  CHECK(JudgePreflight(reports, 0.5, 10000).rejected.empty());
  reports[0].send_problem = "timed out";
  CHECK(Rejected(JudgePreflight(reports, 0.5, 10000)) ==
        std::vector<std::string>{"n0", "n1"});
}

TEST_CASE("a single node is judged on its own checks only") {
  std::vector<PreflightNodeReport> reports = Healthy(1);
  reports[0].send_mbps = reports[0].receive_mbps = 0;
  CHECK(JudgePreflight(reports, 0.5, 10000).rejected.empty());
  reports[0].passed = false;
  reports[0].problem = "GPU 3 is gone";
  CHECK(Rejected(JudgePreflight(reports, 0.5, 10000)) ==
        std::vector<std::string>{"n0"});
}

TEST_CASE("a site figure well below the gang's median degrades that node") {
  std::vector<PreflightNodeReport> reports = Healthy(4);
  for (PreflightNodeReport& r : reports) r.site_mbps = 180000;
  reports[0].site_mbps = 40000;
  const PreflightVerdict verdict = JudgePreflight(reports, 0.5, 10000);
  CHECK(verdict.rejected.empty());
  REQUIRE(verdict.degraded.size() == 1);
  CHECK(verdict.degraded[0].node == "n0");
  CHECK_THAT(verdict.degraded[0].reason,
             Catch::Contains("site check bus bandwidth 40000 MB/s"));
  CHECK(verdict.median_site_mbps == 180000);
}

TEST_CASE("a broken link beside a degraded node still rejects both ends") {
  std::vector<PreflightNodeReport> reports = Healthy(4);
  for (PreflightNodeReport& r : reports) r.site_mbps = 180000;
  reports[1].site_mbps = 40000;                  // n1: slow, degraded alone
  reports[0].send_problem = "connection reset";  // n0 -> n1 broken
  const PreflightVerdict verdict = JudgePreflight(reports, 0.5, 10000);
  CHECK(Rejected(verdict) == std::vector<std::string>{"n0", "n1"});
  CHECK(verdict.degraded.empty());
}

TEST_CASE("the median of an even count is the mean of the middle two") {
  CHECK(PreflightMedian({}) == 0);
  CHECK(PreflightMedian({3, 1, 2}) == 2);
  CHECK(PreflightMedian({4, 1, 3, 2}) == 2.5);
}

}  // namespace preflight_verdict_test
}  // namespace gantry
