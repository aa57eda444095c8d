// `gantry status` on the CLI side: the screen with and without colour, the
// sparkline, when to colour, and the JSON document's keys.
#include "cli/views/status_screen.h"

#include <stdlib.h>
#include <time.h>

#include <catch2/catch.hpp>
#include <string>

#include "cli/views/replication_screen.h"

namespace gantry::cli {
namespace status_screen_test {

// 2023-11-14T22:13:20 UTC, on no minute boundary.
constexpr int64_t kNow = 1'700'000'000'000;

void UseUtc() {
  setenv("TZ", "UTC", 1);
  tzset();
}

v1::ClusterStatusResponse Sample() {
  v1::ClusterStatusResponse status;
  status.set_version("0.1.0");
  status.set_started_ms(kNow - 3'723'000);  // up 1:02:03
  status.set_now_ms(kNow);
  status.set_state_dir("/var/lib/gantry");
  status.set_state_size_bytes(5 * 1024 * 1024 + 512 * 1024);
  status.set_last_commit_seconds(0.0012);
  status.set_median_commit_seconds(0.0009);
  status.set_commits_sampled(42);
  status.set_nodes_total(4);
  status.set_nodes_up(3);
  status.set_nodes_down(1);
  v1::StatusNodeCounts& nodes = *status.mutable_node_counts();
  nodes.set_idle(1);
  nodes.set_mixed(1);
  nodes.set_drained(1);
  nodes.set_down(1);
  nodes.set_simulated(2);
  status.set_cpus_total(64);
  status.set_cpus_allocated(12);
  status.set_gpus_total(16);
  status.set_gpus_allocated(6);
  status.set_gpus_idle(6);
  status.set_gpus_down(4);
  status.set_gpu_utilization_now(0.375);
  status.set_gpu_utilization_mean(0.5);
  status.set_utilization_bucket_seconds(60);
  const int64_t minute = 60'000;
  const int64_t last = kNow - kNow % minute;
  const double shares[] = {0.0, 0.5, -1, 1.0};  // -1: a gap
  for (int i = 0; i < 4; ++i) {
    if (shares[i] < 0) continue;
    v1::UtilizationPoint* point = status.add_gpu_utilization();
    point->set_start_ms(last - (3 - i) * minute);
    point->set_allocated_share(shares[i]);
  }
  const std::pair<v1::JobState, uint64_t> jobs[] = {{v1::PENDING, 3},
                                                    {v1::RUNNING, 2},
                                                    {v1::COMPLETED, 10},
                                                    {v1::FAILED, 1},
                                                    {v1::CANCELLED, 0}};
  for (const auto& [state, count] : jobs) {
    v1::JobStateCount* entry = status.add_jobs_by_state();
    entry->set_state(state);
    entry->set_count(count);
  }
  status.set_jobs_pending(3);
  status.set_jobs_running(2);
  status.set_jobs_finished(11);
  v1::ReasonCount* reason = status.add_pending_reasons();
  reason->set_reason("Resources");
  reason->set_count(2);
  reason->set_example_job_id(7);
  reason->set_example("needs 2 nodes with 8 GPUs; 1 has them free");
  reason = status.add_pending_reasons();
  reason->set_reason("Priority");
  reason->set_count(1);
  reason->set_example_job_id(9);
  status.set_hca_ports_total(8);
  v1::PortDown* port = status.add_hca_ports_down();
  port->set_node("node03");
  port->set_device("mlx5_1");
  port->set_port(1);
  port->set_state("DOWN");
  v1::NodeIssue* issue = status.add_node_issues();
  issue->set_node("node04");
  issue->set_state("down");
  issue->set_reason("heartbeats stopped");
  issue = status.add_node_issues();
  issue->set_node("node2");
  issue->set_state("drained");
  issue->set_reason("maintenance");
  issue->set_busy(true);
  v1::StatusEvent* event = status.add_recent_failures();
  event->set_time_ms(kNow - 60'000);
  event->set_kind("job_restarted");
  event->set_job_id(7);
  event->set_attempt(1);
  event->set_nodes("node01");
  event->set_reason("NonZeroExitCode");
  event->set_detail("rank 0 on node01 exited with code 3");
  event = status.add_recent_failures();
  event->set_time_ms(kNow - 120'000);
  event->set_kind("node_down");
  event->set_nodes("node04");
  event->set_detail("heartbeats stopped");
  status.set_job_failures_last_hour(1);
  status.set_restarts_last_hour(1);
  v1::GoodputSplit& goodput = *status.mutable_goodput_last_day();
  goodput.set_productive_ms(7'200'000);
  goodput.set_lost_ms(90'000);
  goodput.set_detecting_ms(4'000);
  goodput.set_ettr(0.9872);
  status.set_goodput_window_seconds(86'400);
  status.set_node_failures_last_hour(1);
  status.set_next_job_id(17);
  return status;
}

StatusScreenOptions Plain() {
  StatusScreenOptions options;
  options.controller = "unix:/run/gantry/gantryd.sock";
  return options;
}

TEST_CASE("the plain screen shows every topic and no escape codes",
          "[status]") {
  UseUtc();
  const std::string screen = RenderStatusScreen(Sample(), Plain());
  CHECK(screen.find('\x1b') == std::string::npos);
  const char* const expected[] = {
      "Controller   gantryd 0.1.0 at unix:/run/gantry/gantryd.sock, up "
      "1:02:03\n",
      "             state 5.5 MiB in /var/lib/gantry; last commit 1.2 ms, "
      "median 0.9 ms of 42 commits\n",
      "Nodes        4 total: 1 idle, 1 mixed, 1 drained, 1 down (2 "
      "simulated)\n",
      "GPUs         16 total: 6 allocated, 6 idle, 4 down\n",
      "Utilization  38% allocated now, 50% over the last 4 min  [_= #]\n",
      "CPUs         12 of 64 allocated\n",
      "Jobs         3 pending, 2 running, 10 completed, 1 failed\n",
      "Pending      2 Resources  (job 7: needs 2 nodes with 8 GPUs; 1 has them "
      "free)\n",
      "             1 Priority  (job 9)\n",
      "Fabric       8 compute HCA ports, 1 not active:\n",
      "             node03 mlx5_1 port 1 DOWN\n",
      "Attention    node04  down              heartbeats stopped\n",
      "             node2   drained (busy)    maintenance\n",
      "Goodput      last day: ETTR 98.7%: productive 2:00:00, lost 1:30, "
      "detecting 4.0s\n",
      "Failures     last hour: 1 job failure (1 restarted), 1 node failure\n",
      "             11-14 22:12:20  restarted  job 7 attempt 1 on node01: "
      "NonZeroExitCode, rank 0 on node01 exited with code 3\n",
      "             11-14 22:11:20  down       node04: heartbeats stopped\n",
  };
  for (const char* line : expected) {
    INFO(screen);
    CHECK(screen.find(line) != std::string::npos);
  }
}

TEST_CASE("the coloured screen has the same words wrapped in SGR codes",
          "[status]") {
  UseUtc();
  StatusScreenOptions options = Plain();
  options.color = true;
  const std::string screen = RenderStatusScreen(Sample(), options);
  CHECK(screen.find("\x1b[1mNodes        \x1b[0m") != std::string::npos);
  CHECK(screen.find("\x1b[32m1 idle\x1b[0m") != std::string::npos);
  CHECK(screen.find("\x1b[31m1 down\x1b[0m") != std::string::npos);
  CHECK(screen.find("\x1b[33m1 drained\x1b[0m") != std::string::npos);
  CHECK(screen.find("\x1b[31m1 failed\x1b[0m") != std::string::npos);
  // Stripped of its codes, it is the plain screen.
  std::string stripped;
  for (size_t i = 0; i < screen.size(); ++i) {
    if (screen[i] == '\x1b') {
      i = screen.find('m', i);
      continue;
    }
    stripped += screen[i];
  }
  CHECK(stripped == RenderStatusScreen(Sample(), Plain()));
}

TEST_CASE("an empty cluster says so instead of showing zeros", "[status]") {
  v1::ClusterStatusResponse status;
  status.set_version("0.1.0");
  status.set_now_ms(kNow);
  status.set_started_ms(kNow);
  const std::string screen = RenderStatusScreen(status, Plain());
  CHECK(screen.find("no commit since start") != std::string::npos);
  CHECK(screen.find("Nodes        none registered") != std::string::npos);
  CHECK(screen.find("GPUs         none\n") != std::string::npos);
  CHECK(screen.find("Jobs         none yet\n") != std::string::npos);
  CHECK(screen.find("Pending      no job waits\n") != std::string::npos);
  CHECK(screen.find("Attention    every node takes work\n") !=
        std::string::npos);
  CHECK(screen.find("Utilization") == std::string::npos);
}

TEST_CASE("an older gantryd's answer still reads", "[status]") {
  v1::ClusterStatusResponse status;
  status.set_version("0.0.9");
  status.set_nodes_total(3);
  status.set_nodes_up(2);
  status.set_nodes_down(1);
  status.set_jobs_pending(4);
  status.set_jobs_finished(5);
  const std::string screen = RenderStatusScreen(status, Plain());
  CHECK(screen.find("Nodes        3 total: 2 up, 0 unreachable, 1 down\n") !=
        std::string::npos);
  CHECK(screen.find("Jobs         4 pending, 0 running, 5 finished\n") !=
        std::string::npos);
}

TEST_CASE("the sparkline has one character per bucket, gaps as spaces",
          "[status]") {
  const v1::ClusterStatusResponse status = Sample();
  CHECK(UtilizationSparkline(status, false) == "_= #");
  CHECK(UtilizationSparkline(status, true) == "▁▅ █");
  CHECK(UtilizationSparkline(status, false, 2) == " #");
  CHECK(UtilizationSparkline(v1::ClusterStatusResponse(), true).empty());
}

TEST_CASE("colour: a flag beats NO_COLOR, auto wants a terminal", "[status]") {
  CHECK(ShouldUseColor(ColorMode::kAlways, false, "1", nullptr));
  CHECK_FALSE(ShouldUseColor(ColorMode::kNever, true, nullptr, "xterm"));
  CHECK(ShouldUseColor(ColorMode::kAuto, true, nullptr, "xterm"));
  CHECK(ShouldUseColor(ColorMode::kAuto, true, "", nullptr));
  CHECK_FALSE(ShouldUseColor(ColorMode::kAuto, false, nullptr, "xterm"));
  CHECK_FALSE(ShouldUseColor(ColorMode::kAuto, true, "1", "xterm"));
  CHECK_FALSE(ShouldUseColor(ColorMode::kAuto, true, nullptr, "dumb"));

  CHECK(ParseColorMode("auto").value() == ColorMode::kAuto);
  CHECK(ParseColorMode("Always").value() == ColorMode::kAlways);
  CHECK(ParseColorMode("never").value() == ColorMode::kNever);
  CHECK(ParseColorMode("sometimes").status().message() ==
        "invalid --color \"sometimes\": use auto, always or never");
}

TEST_CASE("the locale decides between block and ASCII sparklines", "[status]") {
  CHECK(LocaleIsUtf8(nullptr, nullptr, "en_US.UTF-8"));
  CHECK(LocaleIsUtf8(nullptr, "C.utf8", "C"));
  CHECK_FALSE(LocaleIsUtf8("C", nullptr, "en_US.UTF-8"));  // LC_ALL wins
  CHECK(LocaleIsUtf8("", nullptr, "en_US.UTF-8"));         // empty: unset
  CHECK_FALSE(LocaleIsUtf8(nullptr, nullptr, nullptr));
}

TEST_CASE("sizes and durations read naturally", "[status]") {
  CHECK(FormatBytes(512) == "512 B");
  CHECK(FormatBytes(1536) == "1.5 KiB");
  CHECK(FormatBytes(uint64_t{3} << 30) == "3.0 GiB");
  CHECK(FormatSeconds(0.0004) == "0.4 ms");
  CHECK(FormatSeconds(0.012) == "12 ms");
  CHECK(FormatSeconds(1.25) == "1.25 s");
}

TEST_CASE("the JSON document keeps the old keys and adds the new ones",
          "[status]") {
  UseUtc();
  const nlohmann::json json = StatusToJson(Sample(), "unix:/x.sock");
  CHECK(json["controller"] == "unix:/x.sock");
  CHECK(json["uptime_seconds"] == 3723);
  CHECK(json["next_job_id"] == 17);
  CHECK(json["goodput_last_day"]["ettr"] == 0.9872);
  CHECK(json["goodput_last_day"]["lost_seconds"] == 90.0);
  CHECK(json["goodput_last_day"]["window_seconds"] == 86'400);
  CHECK(json["nodes"]["total"] == 4);
  CHECK(json["nodes"]["up"] == 3);
  CHECK(json["nodes"]["down"] == 1);
  CHECK(json["nodes"]["drained"] == 1);
  CHECK(json["nodes"]["simulated"] == 2);
  CHECK(json["gpus"]["idle"] == 6);
  CHECK(json["gpus"]["down"] == 4);
  CHECK(json["jobs"]["pending"] == 3);
  CHECK(json["jobs"]["finished"] == 11);
  CHECK(json["jobs"]["completed"] == 10);
  CHECK(json["jobs"]["cancelled"] == 0);
  CHECK(json["state_size_bytes"] == 5 * 1024 * 1024 + 512 * 1024);
  CHECK(json["commit"]["sampled"] == 42);
  CHECK(json["gpu_utilization"]["series"].size() == 3);
  CHECK(json["gpu_utilization"]["mean"] == 0.5);
  CHECK(json["pending_reasons"][0]["reason"] == "Resources");
  CHECK(json["pending_reasons"][0]["count"] == 2);
  CHECK(json["fabric"]["hca_ports"] == 8);
  CHECK(json["fabric"]["hca_ports_down"][0]["device"] == "mlx5_1");
  CHECK(json["node_issues"][1]["busy"] == true);
  CHECK(json["recent_failures"][0]["kind"] == "job_restarted");
  CHECK(json["recent_failures"][0]["time"] == "2023-11-14T22:12:20");
  CHECK(json["last_hour"]["restarts"] == 1);
}

TEST_CASE("the dataset caches' use shows on the screen and in JSON",
          "[status]") {
  UseUtc();
  v1::ClusterStatusResponse status = Sample();
  CHECK(RenderStatusScreen(status, Plain())
            .find("Cache        no node reports a dataset cache\n") !=
        std::string::npos);
  v1::DatasetCacheUse& cache = *status.mutable_dataset_cache();
  cache.set_nodes_reporting(2);
  cache.set_capacity_bytes(4ull << 30);
  cache.set_used_bytes(1ull << 30);
  cache.set_datasets(1);
  cache.set_copies(2);
  cache.set_pinned_copies(1);
  const std::string screen = RenderStatusScreen(status, Plain());
  INFO(screen);
  CHECK(screen.find("Cache        1.0 GiB of 4.0 GiB (25%) on 2 nodes, 1 "
                    "dataset (2 copies, 1 pinned by jobs)\n") !=
        std::string::npos);
  const nlohmann::json json = StatusToJson(status, "unix:/x.sock");
  CHECK(json["dataset_cache"]["nodes_reporting"] == 2);
  CHECK(json["dataset_cache"]["used_bytes"] == 1ull << 30);
  CHECK(json["dataset_cache"]["pinned_copies"] == 1);
}

TEST_CASE("a forged record's key is printed escaped in the alarm", "[status]") {
  v1::ReplicationStatus replication;
  replication.set_enabled(true);
  replication.set_leader("ctl1");
  v1::ControllerMember& member = *replication.add_controllers();
  member.set_name("ctl1");
  member.set_forged_records(1);
  // Whoever wrote the record chose its key: an escape sequence and a
  // right-to-left override.
  member.set_last_forged_key(
      "/gantry/log/\x1b[2J\xe2\x80\xae"
      "1");
  std::string alarm;
  for (const auto& [title, text] : ReplicationLines(replication)) {
    if (title == "ALARM") alarm = text;
  }
  REQUIRE_FALSE(alarm.empty());
  CHECK(alarm.find('\x1b') == std::string::npos);
  CHECK(alarm.find("\xe2\x80\xae") == std::string::npos);
  CHECK_THAT(alarm, Catch::Contains("/gantry/log/"));
}

}  // namespace status_screen_test
}  // namespace gantry::cli
