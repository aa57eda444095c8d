// TOML config files turned into flag words.
#include "common/config_file.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

namespace gantry {
namespace {

std::string WriteTemp(const std::string& text) {
  char path[] = "/tmp/gantry-config-test-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("keys become flags, lists repeat them", "[config]") {
  std::string path = WriteTemp(
      "state-dir = \"/var/lib/gantry\"\nnode-timeout = 3.5\nverbose = true\n"
      "network-role = [\"mlx5_4=storage\", \"eth1=management\"]\n");
  auto flags = ConfigFileToFlags(
      path, {"state-dir", "node-timeout", "verbose", "network-role"});
  std::remove(path.c_str());
  REQUIRE(flags.ok());
  // Keys come in the table's (sorted) order; a list keeps its own order.
  CHECK(*flags == std::vector<std::string>{
                      "--network-role=mlx5_4=storage",
                      "--network-role=eth1=management", "--node-timeout=3.5",
                      "--state-dir=/var/lib/gantry", "--verbose=true"});
}

TEST_CASE("an unknown key names its line", "[config]") {
  std::string path = WriteTemp("state-dir = \"/x\"\nlisen = \"a\"\n");
  auto flags = ConfigFileToFlags(path, {"state-dir", "listen"});
  std::remove(path.c_str());
  REQUIRE_FALSE(flags.ok());
  CHECK_THAT(std::string(flags.status().message()),
             Catch::EndsWith(":2: unknown key \"lisen\""));
}

TEST_CASE("syntax errors and tables are refused", "[config]") {
  std::string path = WriteTemp("state-dir = \n");
  auto flags = ConfigFileToFlags(path, {"state-dir"});
  std::remove(path.c_str());
  REQUIRE_FALSE(flags.ok());
  CHECK_THAT(std::string(flags.status().message()), Catch::Contains(":1:"));

  path = WriteTemp("[state-dir]\nx = 1\n");
  flags = ConfigFileToFlags(path, {"state-dir"});
  std::remove(path.c_str());
  REQUIRE_FALSE(flags.ok());
  CHECK_THAT(std::string(flags.status().message()),
             Catch::Contains("must be a string, number or boolean"));

  CHECK(ConfigFileToFlags("/nonexistent.toml", {}).status().code() ==
        absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gantry
