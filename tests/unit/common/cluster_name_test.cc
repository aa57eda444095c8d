// The names gantryd accepts for its cluster and default account.
#include "common/cluster_name.h"

#include <string>

#include <catch2/catch.hpp>

namespace gantry {
namespace cluster_name_test {

TEST_CASE("cluster and account names as Slurm's tools carry them",
          "[cluster_name]") {
  for (const std::string good : {"gantry", "hpc-1", "a", "Prod_East.2"}) {
    INFO(good);
    CHECK(CheckSlurmName("--cluster-name", good).ok());
  }
  CHECK(CheckSlurmName("--cluster-name", std::string(64, 'x')).ok());
  struct Bad {
    std::string name;
    std::string message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"", "--cluster-name is empty"},
           {std::string(65, 'x'),
            "--cluster-name is 65 characters long; at most 64"},
           {"two words", "may hold only letters, digits"},
           {"a|b", "may hold only letters, digits"},
           {"new\nline", "\"new\\nline\" may hold only"},
       }) {
    INFO(bad.name);
    const absl::Status status = CheckSlurmName("--cluster-name", bad.name);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(status.message()), Catch::Contains(bad.message));
  }
  CHECK_THAT(std::string(CheckSlurmName("--default-account", "").message()),
             Catch::StartsWith("--default-account"));
}

}  // namespace cluster_name_test
}  // namespace gantry
