#include "daemon/scheduler/partition_config.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace partition_config_test {

std::string ErrorOf(const std::string& line) {
  absl::StatusOr<PartitionConfig> parsed = ParsePartitionLine(line);
  REQUIRE_FALSE(parsed.ok());
  return std::string(parsed.status().message());
}

TEST_CASE("a bare name is a partition of every node without limits") {
  absl::StatusOr<PartitionConfig> parsed = ParsePartitionLine("main");
  REQUIRE(parsed.ok());
  CHECK(parsed->name == "main");
  CHECK(parsed->all_nodes);
  CHECK(parsed->Contains("anything"));
  CHECK(parsed->max_time_seconds == 0);
  CHECK(parsed->max_nodes == 0);
  CHECK(parsed->ImplicitTimeLimit() == 0);
}

TEST_CASE("a slurm.conf PartitionName line carries over") {
  absl::StatusOr<PartitionConfig> parsed = ParsePartitionLine(
      "PartitionName=gpu Nodes=node[001-004,007] Default=YES "
      "DefaultTime=1:00:00 MaxTime=2-00:00:00 MaxNodes=3 "
      "HotSpares=node007 State=UP");
  REQUIRE(parsed.ok());
  CHECK(parsed->name == "gpu");
  CHECK_FALSE(parsed->all_nodes);
  CHECK(parsed->nodes == std::set<std::string>{"node001", "node002", "node003",
                                               "node004", "node007"});
  CHECK(parsed->Contains("node003"));
  CHECK_FALSE(parsed->Contains("node005"));
  CHECK(parsed->is_default);
  CHECK(parsed->default_time_seconds == 3600);
  CHECK(parsed->max_time_seconds == 2 * 86400);
  CHECK(parsed->max_nodes == 3);
  CHECK(parsed->hot_spares == std::set<std::string>{"node007"});
  CHECK(parsed->ImplicitTimeLimit() == 3600);
}

TEST_CASE("keys are case-insensitive and UNLIMITED means no limit") {
  absl::StatusOr<PartitionConfig> parsed = ParsePartitionLine(
      "debug  nodes=ALL\tmaxtime=UNLIMITED maxnodes=INFINITE default=no");
  REQUIRE(parsed.ok());
  CHECK(parsed->all_nodes);
  CHECK(parsed->max_time_seconds == 0);
  CHECK(parsed->max_nodes == 0);
  CHECK_FALSE(parsed->is_default);
}

TEST_CASE("without DefaultTime a job gets MaxTime") {
  absl::StatusOr<PartitionConfig> parsed =
      ParsePartitionLine("short MaxTime=30:00");
  REQUIRE(parsed.ok());
  CHECK(parsed->ImplicitTimeLimit() == 1800);
}

TEST_CASE("bad partition definitions are refused with the reason") {
  CHECK_THAT(ErrorOf(""), Catch::Contains("empty partition"));
  CHECK_THAT(ErrorOf("gpu/1"), Catch::Contains("invalid partition name"));
  CHECK_THAT(ErrorOf("gpu Nodes"), Catch::Contains("not KEY=VALUE"));
  CHECK_THAT(ErrorOf("gpu Nodes="), Catch::Contains("needs a value"));
  CHECK_THAT(ErrorOf("gpu Nodes=node[3-1]"), Catch::Contains("Nodes="));
  CHECK_THAT(ErrorOf("gpu MaxTime=soon"), Catch::Contains("MaxTime=soon"));
  CHECK_THAT(ErrorOf("gpu MaxNodes=0"), Catch::Contains("positive count"));
  CHECK_THAT(ErrorOf("gpu MaxNodes=-2"), Catch::Contains("MaxNodes=-2"));
  CHECK_THAT(ErrorOf("gpu Default=maybe"), Catch::Contains("YES or NO"));
  CHECK_THAT(ErrorOf("gpu State=DOWN"), Catch::Contains("only State=UP"));
  CHECK_THAT(ErrorOf("gpu OverSubscribe=YES"),
             Catch::Contains("unknown key \"OverSubscribe\""));
  CHECK_THAT(ErrorOf("gpu DefaultTime=2:00:00 MaxTime=1:00:00"),
             Catch::Contains("DefaultTime is longer than MaxTime"));
  CHECK_THAT(ErrorOf("gpu Nodes=n[1-2] HotSpares=n3"),
             Catch::Contains("hot spare n3 is not one of its Nodes"));
}

TEST_CASE("the first partition is the default unless one says so") {
  absl::StatusOr<std::vector<PartitionConfig>> plain =
      ParsePartitions({"a Nodes=n1", "b Nodes=n2"});
  REQUIRE(plain.ok());
  CHECK((*plain)[0].is_default);
  CHECK_FALSE((*plain)[1].is_default);

  absl::StatusOr<std::vector<PartitionConfig>> chosen =
      ParsePartitions({"a Nodes=n1", "b Nodes=n2 Default=YES"});
  REQUIRE(chosen.ok());
  CHECK_FALSE((*chosen)[0].is_default);
  CHECK((*chosen)[1].is_default);
}

TEST_CASE("partition sets with duplicates or two defaults are refused") {
  absl::StatusOr<std::vector<PartitionConfig>> twice =
      ParsePartitions({"a", "b", "a Nodes=n1"});
  REQUIRE_FALSE(twice.ok());
  CHECK_THAT(std::string(twice.status().message()),
             Catch::Contains("#3") && Catch::Contains("defined twice"));

  absl::StatusOr<std::vector<PartitionConfig>> defaults =
      ParsePartitions({"a Default=YES", "b Default=YES"});
  REQUIRE_FALSE(defaults.ok());
  CHECK_THAT(std::string(defaults.status().message()),
             Catch::Contains("both say Default=YES"));

  CHECK_FALSE(ParsePartitions({}).ok());
  absl::StatusOr<std::vector<PartitionConfig>> bad =
      ParsePartitions({"a", "b MaxNodes=x"});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("#2") && Catch::Contains("partition b"));
}

}  // namespace partition_config_test
}  // namespace gantry
