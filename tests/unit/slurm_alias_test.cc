// gantry run under a Slurm command's name does that command's job.
#include "cli/slurm_alias.h"

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace {

using Words = std::vector<std::string>;

TEST_CASE("Slurm names become gantry subcommands", "[slurm_alias]") {
  CHECK(ExpandSlurmAlias({"/usr/bin/sbatch", "-N", "2", "job.sh"}) ==
        Words{"gantry", "batch", "-N", "2", "job.sh"});
  CHECK(ExpandSlurmAlias({"squeue", "-u", "alice"}) ==
        Words{"gantry", "queue", "-u", "alice"});
  CHECK(ExpandSlurmAlias({"./scancel", "12", "13"}) ==
        Words{"gantry", "cancel", "12", "13"});
  CHECK(ExpandSlurmAlias({"sinfo"}) == Words{"gantry", "nodes"});
}

TEST_CASE("other names are left alone", "[slurm_alias]") {
  CHECK(ExpandSlurmAlias({"/usr/bin/gantry", "queue"}) ==
        Words{"/usr/bin/gantry", "queue"});
  // Only the base name counts: a directory called sbatch changes nothing.
  CHECK(ExpandSlurmAlias({"/opt/sbatch/gantry"}) ==
        Words{"/opt/sbatch/gantry"});
  CHECK(ExpandSlurmAlias({"sbatch-wrapper"}) == Words{"sbatch-wrapper"});
  CHECK(ExpandSlurmAlias({}).empty());
}

}  // namespace
}  // namespace gantry::cli
