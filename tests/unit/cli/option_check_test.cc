// Unknown options get getopt's words and the closest option; Slurm's
// options Gantry does not act on are warned about or refused by name.
#include "cli/option_check.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cli/slurm/foreign_options.h"

namespace gantry::cli {
namespace option_check_test {

using Words = std::vector<std::string>;

TEST_CASE("an unknown option is named with the closest one", "[option_check]") {
  CLI::App app;
  std::string controller;
  app.add_option("--controller", controller);
  CLI::App* queue = app.add_subcommand("queue");
  queue->set_help_flag("--help");  // -h is --noheader, as in squeue
  std::vector<std::string> names, users;
  bool no_header = false;
  queue->add_option("-n,--name", names);
  queue->add_option("-u,--user", users);
  queue->add_flag("-h,--noheader", no_header);
  CHECK(CheckOptions(*queue, {"-n", "x", "--user=a", "-hu", "bob"}, "squeue")
            .ok());
  // A value that looks like an option is the option's value.
  CHECK(CheckOptions(*queue, {"-n", "--weird"}, "squeue").ok());
  CHECK(CheckOptions(*queue, {"--controller", "unix:/x"}, "squeue").ok());
  CHECK(CheckOptions(*queue, {"--", "--anything"}, "squeue").ok());
  absl::Status typo = CheckOptions(*queue, {"--nme", "x"}, "squeue");
  REQUIRE(!typo.ok());
  CHECK(typo.message() ==
        "squeue: unrecognized option '--nme' (did you mean '--name'?)\n"
        "Try \"squeue --help\" for more information");
  absl::Status far = CheckOptions(*queue, {"--zzzzzzz=1"}, "gantry queue");
  REQUIRE(!far.ok());
  CHECK(far.message() ==
        "gantry queue: unrecognized option '--zzzzzzz'\n"
        "Try \"gantry queue --help\" for more information");
  absl::Status letter = CheckOptions(*queue, {"-hz"}, "squeue");
  REQUIRE(!letter.ok());
  CHECK(absl::StartsWith(letter.message(), "squeue: invalid option -- 'z'"));
}

TEST_CASE("Slurm options Gantry does not act on", "[foreign_options]") {
  Words warnings;
  absl::StatusOr<Words> kept = TakeForeignOptions(
      "queue",
      {"-M", "c1", "--federation", "-u", "bob", "--clusters=c2", "-Mc3"},
      warnings);
  REQUIRE(kept.ok());
  CHECK(*kept == Words{"-u", "bob"});
  CHECK(warnings.size() == 4);
  CHECK(absl::StrContains(warnings[0], "-M/--clusters"));
  absl::StatusOr<Words> refused =
      TakeForeignOptions("queue", {"--reservation=r1"}, warnings);
  REQUIRE(!refused.ok());
  CHECK(absl::StrContains(refused.status().message(), "--reservation"));
  CHECK(!TakeForeignOptions("nodes", {"-T"}, warnings).ok());
  CHECK(!TakeForeignOptions("cancel", {"--wckey", "k"}, warnings).ok());
  CHECK(!TakeForeignOptions("queue", {"-M"}, warnings).ok());
  // Other commands' options and anything after "--" are left alone.
  CHECK(*TakeForeignOptions("batch", {"-M", "x"}, warnings) ==
        Words{"-M", "x"});
  CHECK(*TakeForeignOptions("queue", {"--", "-M"}, warnings) ==
        Words{"--", "-M"});
}

}  // namespace option_check_test
}  // namespace gantry::cli
