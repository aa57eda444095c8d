// sstat's line: a running job's measurements summed over its nodes.
#include "cli/slurm/sstat_format.h"

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace sstat_format_test {

v1::JobRecord Measured() {
  v1::JobRecord job;
  job.set_id(9);
  job.set_state(v1::RUNNING);
  struct Node {
    const char* name;
    uint64_t cpu_usec, rss, peak;
    uint32_t tasks;
  };
  for (const Node& n : {Node{"node01", 8'000'000, 4 << 20, 6 << 20, 2},
                        Node{"node02", 4'000'000, 2 << 20, 0, 2}}) {
    v1::JobUsageSample& s = *job.add_live_usage();
    s.set_node(n.name);
    s.set_cpu_usec(n.cpu_usec);
    s.set_rss_bytes(n.rss);
    s.set_max_rss_bytes(n.peak);
    s.set_tasks(n.tasks);
  }
  return job;
}

TEST_CASE("sstat fields of a measured job") {
  absl::StatusOr<std::vector<std::string>> fields =
      ParseSstatFields(kSstatDefaultFormat);
  REQUIRE(fields.ok());
  CHECK(SstatRow(Measured(), *fields, SacctParsable::kNoEnding) ==
        "9|6144K|node01|1536K|00:00:04|node02|00:00:03|4\n");
  CHECK(SstatHeader(*fields, SacctParsable::kNoEnding) ==
        "JobID|MaxRSS|MaxRSSNode|AveRSS|MinCPU|MinCPUNode|AveCPU|NTasks\n");
  absl::StatusOr<std::vector<std::string>> some =
      ParseSstatFields("jobid,totalcpu");
  REQUIRE(some.ok());
  CHECK(SstatRow(Measured(), *some, SacctParsable::kNo) ==
        "9              00:00:12 \n");
  // Nothing measured yet: no line.
  v1::JobRecord fresh;
  fresh.set_id(3);
  CHECK(SstatRow(fresh, *fields, SacctParsable::kNo).empty());
}

TEST_CASE("sstat refuses fields it cannot fill") {
  absl::StatusOr<std::vector<std::string>> bad =
      ParseSstatFields("JobID,MaxVMSize");
  REQUIRE(!bad.ok());
  CHECK(std::string(bad.status().message()).find("MaxVMSize") !=
        std::string::npos);
  CHECK(!ParseSstatFields("").ok());
  CHECK(SstatKb(2048) == "2K");
}

}  // namespace sstat_format_test
}  // namespace gantry::cli
