// The per-rank progress files (agent/launch/rank_progress.h): their one-line
// format, reading them safely, and one node's summary of its ranks.
#include "agent/launch/rank_progress.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

namespace gantry::agent {
namespace rank_progress_test {

TEST_CASE("a progress file holds a step and maybe a step time",
          "[rank_progress]") {
  struct Case {
    const char* text;
    bool ok;
    int64_t step;
    double seconds;
  };
  const Case cases[] = {
      {"12\n", true, 12, 0},
      {"12 0.84\n", true, 12, 0.84},
      {"  7\t1.5  \nanything after\n", true, 7, 1.5},
      {"0 0", true, 0, 0},
      {"-1 0.5", false, 0, 0},
      {"12 -0.5", false, 0, 0},
      {"12 nan", false, 0, 0},
      {"12 inf", false, 0, 0},
      {"twelve", false, 0, 0},
      {"12 0.5 extra", false, 0, 0},
      {"1.5", false, 0, 0},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    absl::StatusOr<RankStep> parsed = ParseProgress(c.text);
    REQUIRE(parsed.ok() == c.ok);
    if (!c.ok) {
      CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
      continue;
    }
    CHECK(parsed->step == c.step);
    CHECK(parsed->step_seconds == Approx(c.seconds));
  }
  CHECK(ParseProgress("").status().code() == absl::StatusCode::kNotFound);
  CHECK(ParseProgress(" \n").status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("file names: the job's ranks and step tasks apart",
          "[rank_progress]") {
  v1::RankId rank;
  rank.set_rank(5);
  CHECK(ProgressFileName(rank) == "progress-5");
  rank.set_step(2);
  CHECK(ProgressFileName(rank) == "progress-s2-5");
}

TEST_CASE("only regular files are read, never through a link",
          "[rank_progress]") {
  char pattern[] = "/tmp/rank-progress-XXXXXX";
  REQUIRE(mkdtemp(pattern) != nullptr);
  const std::string dir = pattern;
  const std::string file = dir + "/progress-0";
  std::ofstream(file) << "40 1.25\n";
  std::optional<RankStep> read = ReadProgressFile(file);
  REQUIRE(read.has_value());
  CHECK(read->step == 40);
  CHECK(read->step_seconds == Approx(1.25));
  REQUIRE(symlink(file.c_str(), (dir + "/link").c_str()) == 0);
  CHECK_FALSE(ReadProgressFile(dir + "/link").has_value());
  REQUIRE(mkfifo((dir + "/fifo").c_str(), 0600) == 0);
  CHECK_FALSE(ReadProgressFile(dir + "/fifo").has_value());  // no hang
  CHECK_FALSE(ReadProgressFile(dir + "/missing").has_value());
  std::ofstream(dir + "/empty") << "";
  CHECK_FALSE(ReadProgressFile(dir + "/empty").has_value());
  std::ofstream(dir + "/bad") << "garbage\n";
  CHECK_FALSE(ReadProgressFile(dir + "/bad").has_value());
  for (const char* name : {"progress-0", "link", "fifo", "empty", "bad"}) {
    unlink((dir + "/" + name).c_str());
  }
  rmdir(dir.c_str());
}

TEST_CASE("a node is as far as its last rank and as slow as its slowest",
          "[rank_progress]") {
  CHECK_FALSE(SummarizeRanks({}).has_value());
  std::optional<v1::NodeProgress> node =
      SummarizeRanks({{8, {100, 0.5}}, {9, {98, 1.5}}, {10, {101, 0.7}}});
  REQUIRE(node.has_value());
  CHECK(node->step() == 98);
  CHECK(node->step_seconds() == Approx(1.5));
  CHECK(node->slowest_rank() == 9);
  CHECK(node->ranks() == 3);
  // Step counts only: no step time, the first rank named.
  node = SummarizeRanks({{3, {5, 0}}, {4, {6, 0}}});
  REQUIRE(node.has_value());
  CHECK(node->step() == 5);
  CHECK(node->step_seconds() == 0);
  CHECK(node->slowest_rank() == 3);
}

}  // namespace rank_progress_test
}  // namespace gantry::agent
