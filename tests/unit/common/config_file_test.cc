// The shared TOML config file: each program's table turned into flag words.
#include "common/config_file.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

namespace gantry {
namespace config_file_test {

std::string WriteTemp(const std::string& text) {
  char path[] = "/tmp/gantry-config-test-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  std::ofstream(path) << text;
  return path;
}

// The error message of reading `text` as `table` with `keys`.
std::string ErrorOf(const std::string& text, const std::string& table,
                    const std::set<std::string>& keys) {
  std::string path = WriteTemp(text);
  auto flags = ConfigFileToFlags(path, table, keys);
  std::remove(path.c_str());
  REQUIRE_FALSE(flags.ok());
  CHECK(flags.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(flags.status().message());
}

TEST_CASE("own table's keys become flags, lists repeat them", "[config]") {
  std::string path = WriteTemp(
      "[agent]\nnetwork-role = [\"mlx5_4=storage\", \"eth1=management\"]\n"
      "stop-grace = 5\n"
      "[controller]\nstate-dir = \"/var/lib/gantry\"\nnode-timeout = 3.5\n"
      "verbose = true\n");
  auto flags = ConfigFileToFlags(path, "controller",
                                 {"state-dir", "node-timeout", "verbose"});
  auto agent = ConfigFileToFlags(path, "agent", {"network-role", "stop-grace"});
  std::remove(path.c_str());
  REQUIRE(flags.ok());
  // Keys come in the table's (sorted) order with their lines.
  CHECK(*flags == std::vector<ConfigFlag>{
                      {"node-timeout", 6, {"--node-timeout=3.5"}},
                      {"state-dir", 5, {"--state-dir=/var/lib/gantry"}},
                      {"verbose", 7, {"--verbose=true"}}});
  // The other daemon's table is skipped; its own gives a list in order.
  REQUIRE(agent.ok());
  CHECK(*agent == std::vector<ConfigFlag>{
                      {"network-role", 2, {"--network-role=mlx5_4=storage"}},
                      {"network-role", 2, {"--network-role=eth1=management"}},
                      {"stop-grace", 3, {"--stop-grace=5"}}});
}

TEST_CASE("an empty string is a separate word", "[config]") {
  // "--hot-spares=" would make the flag parser take the next word.
  std::string path = WriteTemp("[controller]\nhot-spares = \"\"\n");
  auto flags = ConfigFileToFlags(path, "controller", {"hot-spares"});
  std::remove(path.c_str());
  REQUIRE(flags.ok());
  CHECK(*flags ==
        std::vector<ConfigFlag>{{"hot-spares", 2, {"--hot-spares", ""}}});
}

TEST_CASE("no table of one's own, or only comments: no flags", "[config]") {
  std::string path = WriteTemp("# all defaults\n[agent]\n# stop-grace = 10\n");
  auto flags = ConfigFileToFlags(path, "controller", {"state-dir"});
  auto agent = ConfigFileToFlags(path, "agent", {"stop-grace"});
  std::remove(path.c_str());
  REQUIRE(flags.ok());
  CHECK(flags->empty());
  REQUIRE(agent.ok());
  CHECK(agent->empty());
}

TEST_CASE("an unknown key in one's table names key, table and line",
          "[config]") {
  CHECK_THAT(ErrorOf("[controller]\nstate-dir = \"/x\"\nlisen = \"a\"\n",
                     "controller", {"state-dir", "listen"}),
             Catch::EndsWith(":3: unknown key \"lisen\" in [controller]"));
}

TEST_CASE("a key outside any table is refused with its line", "[config]") {
  CHECK_THAT(ErrorOf("\n\nstate-dir = \"/x\"\n[controller]\n", "controller",
                     {"state-dir"}),
             Catch::Contains(":3: key \"state-dir\" is outside any table"));
}

TEST_CASE("an unknown table is refused with its line", "[config]") {
  // Refused by every daemon, not only the one it was meant for.
  CHECK_THAT(ErrorOf("[agent]\nstop-grace = 1\n[controler]\nx = 1\n", "agent",
                     {"stop-grace"}),
             Catch::Contains(":3: unknown table [controler] (expected "
                             "[agent], [client], [controller], [fleet])"));
}

TEST_CASE("syntax errors and nested tables are refused", "[config]") {
  CHECK_THAT(
      ErrorOf("[controller]\nstate-dir = \n", "controller", {"state-dir"}),
      Catch::Contains(":2:"));
  CHECK_THAT(
      ErrorOf("[controller.state-dir]\nx = 1\n", "controller", {"state-dir"}),
      Catch::Contains("must be a string, number or boolean"));
  CHECK(ConfigFileToFlags("/nonexistent.toml", "agent", {}).status().code() ==
        absl::StatusCode::kNotFound);
}

}  // namespace config_file_test
}  // namespace gantry
