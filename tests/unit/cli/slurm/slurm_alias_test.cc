// gantry run under a Slurm command's name does that command's job.
#include "cli/slurm/slurm_alias.h"

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace slurm_alias_test {

using Words = std::vector<std::string>;

Words Expand(const Words& argv) {
  absl::StatusOr<Words> words = ExpandSlurmAlias(argv);
  REQUIRE(words.ok());
  return *words;
}

TEST_CASE("Slurm names become gantry subcommands", "[slurm_alias]") {
  CHECK(Expand({"/usr/bin/sbatch", "-N", "2", "job.sh"}) ==
        Words{"gantry", "batch", "-N", "2", "job.sh"});
  CHECK(Expand({"squeue", "-u", "alice"}) ==
        Words{"gantry", "queue", "-u", "alice"});
  CHECK(Expand({"./scancel", "12", "13"}) ==
        Words{"gantry", "cancel", "12", "13"});
  CHECK(Expand({"sinfo", "-N"}) ==
        Words{"gantry", "nodes", "--slurm-layout", "-N"});
  CHECK(Expand({"/usr/bin/sacct", "-P", "-j", "4"}) ==
        Words{"gantry", "acct", "-P", "-j", "4"});
  CHECK(Expand({"sreport", "user", "TopUsage"}) ==
        Words{"gantry", "report", "user", "TopUsage"});
  CHECK(Expand({"sprio"}) == Words{"gantry", "prio"});
  CHECK(Expand({"sshare", "-a"}) == Words{"gantry", "share", "-a"});
  CHECK(Expand({"sdiag"}) == Words{"gantry", "diag"});
}

TEST_CASE("scontrol show maps to job, nodes and hostnames", "[slurm_alias]") {
  CHECK(Expand({"scontrol", "show", "job", "7"}) ==
        Words{"gantry", "job", "--slurm-only", "7"});
  CHECK(Expand({"/usr/bin/scontrol", "-d", "show", "jobid=7"}) ==
        Words{"gantry", "job", "--slurm-only", "--details", "7"});
  CHECK(Expand({"scontrol", "show", "node", "n1"}) ==
        Words{"gantry", "nodes", "n1"});
  CHECK(Expand({"scontrol", "show", "nodes"}) ==
        Words{"gantry", "nodes", "--detail"});
  CHECK(Expand({"scontrol", "show", "hostnames", "n[1-2]"}) ==
        Words{"gantry", "hostnames", "n[1-2]"});
  CHECK(Expand({"scontrol", "show", "hostnames"}) ==
        Words{"gantry", "hostnames"});
}

TEST_CASE("scontrol hold and release map to gantry hold and release",
          "[slurm_alias]") {
  CHECK(Expand({"scontrol", "release", "12,13", "14"}) ==
        Words{"gantry", "release", "12,13", "14"});
  CHECK(Expand({"scontrol", "hold", "jobid=7_2"}) ==
        Words{"gantry", "hold", "7_2"});
  CHECK(Expand({"scontrol", "uhold", "7"}) == Words{"gantry", "hold", "7"});
  CHECK_FALSE(ExpandSlurmAlias({"scontrol", "release"}).ok());
}

TEST_CASE("srun is gantry run, its words untouched", "[slurm_alias]") {
  CHECK(Expand({"/usr/bin/srun", "-N1", "-w", "n1", "hostname", "-i"}) ==
        Words{"gantry", "run", "-N1", "-w", "n1", "hostname", "-i"});
}

TEST_CASE("salloc is gantry alloc, sattach gantry attach", "[slurm_alias]") {
  CHECK(Expand({"/usr/bin/salloc", "-N2", "bash", "-l"}) ==
        Words{"gantry", "alloc", "-N2", "bash", "-l"});
  CHECK(Expand({"sattach", "-l", "12.1"}) ==
        Words{"gantry", "attach", "-l", "12.1"});
}

TEST_CASE("what gantry does not offer is an error that says so",
          "[slurm_alias]") {
  absl::StatusOr<Words> reboot = ExpandSlurmAlias({"scontrol", "reboot", "n1"});
  REQUIRE(!reboot.ok());
  CHECK(reboot.status().message().find("scontrol reboot") != std::string::npos);
  CHECK(!ExpandSlurmAlias({"scontrol", "show", "licenses"}).ok());
  CHECK(!ExpandSlurmAlias({"scontrol", "update"}).ok());
  CHECK(!ExpandSlurmAlias({"scontrol"}).ok());
}

TEST_CASE("other names are left alone", "[slurm_alias]") {
  CHECK(Expand({"/usr/bin/gantry", "queue"}) ==
        Words{"/usr/bin/gantry", "queue"});
  // Only the base name counts: a directory called sbatch changes nothing.
  CHECK(Expand({"/opt/sbatch/gantry"}) == Words{"/opt/sbatch/gantry"});
  CHECK(Expand({"sbatch-wrapper"}) == Words{"sbatch-wrapper"});
  CHECK(Expand({}).empty());
}

}  // namespace slurm_alias_test
}  // namespace gantry::cli
