// The cgroup v2 file texts, from fixtures: a hybrid host (this test
// machine's layout), a pure v2 host under systemd, and hosts without v2.
#include "agent/launch/cgroup_text.h"

#include <catch2/catch.hpp>

namespace gantry::agent {
namespace cgroup_text_test {

constexpr const char* kHybridMountinfo =
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup "
    "rw,memory\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

constexpr const char* kPureV2Mountinfo =
    "25 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
    "27 22 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 "
    "- cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";

TEST_CASE("the cgroup2 mount is found in mountinfo", "[cgroup]") {
  CHECK(FindCgroup2Mount(kHybridMountinfo) == "/sys/fs/cgroup/unified");
  // Optional fields (shared:N) come before the separator.
  CHECK(FindCgroup2Mount(kPureV2Mountinfo) == "/sys/fs/cgroup");
  CHECK(FindCgroup2Mount(
            "31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n") ==
        std::nullopt);
  CHECK(FindCgroup2Mount("") == std::nullopt);
  CHECK(FindCgroup2Mount("garbage\n1 2 3\n") == std::nullopt);
  // A mount point with a space in it is escaped as \040.
  CHECK(FindCgroup2Mount("40 30 0:37 / /mnt/my\\040cgroups rw - cgroup2 "
                         "cgroup2 rw\n") == "/mnt/my cgroups");
  // A source named "cgroup2" is not the type.
  CHECK(FindCgroup2Mount("41 30 0:38 / /x rw - tmpfs cgroup2 rw\n") ==
        std::nullopt);
}

TEST_CASE("the process's v2 cgroup is the 0:: line", "[cgroup]") {
  CHECK(UnifiedCgroupPath("9:name=systemd:/\n4:memory:/process_api/f0\n"
                          "1:cpu:/\n0::/\n") == "/");
  CHECK(UnifiedCgroupPath("0::/system.slice/gantry-agent.service\n") ==
        "/system.slice/gantry-agent.service");
  CHECK(UnifiedCgroupPath("4:memory:/x\n1:cpu:/\n") == std::nullopt);
  // Outside the process's cgroup namespace: not usable.
  CHECK(UnifiedCgroupPath("0::/../other\n") == std::nullopt);
  CHECK(UnifiedCgroupPath("0::\n") == std::nullopt);
}

TEST_CASE("controller lists", "[cgroup]") {
  CHECK(ParseControllerList("cpuset cpu io memory hugetlb pids\n") ==
        std::set<std::string>{"cpuset", "cpu", "io", "memory", "hugetlb",
                              "pids"});
  CHECK(ParseControllerList("hugetlb\n") == std::set<std::string>{"hugetlb"});
  CHECK(ParseControllerList("").empty());
}

TEST_CASE("a job's request as cgroup limits", "[cgroup]") {
  CHECK(CpuMaxFor(4) == "400000 100000");
  CHECK(CpuMaxFor(1) == "100000 100000");
  CHECK(CpuMaxFor(0) == "max 100000");
  CHECK(MemoryMaxFor(0) == "max");
  CHECK(MemoryMaxFor(64) == "67108864");
  CHECK(MemoryMaxFor(2 * 1024 * 1024) == "2199023255552");  // 2 TiB
}

TEST_CASE("the oom_kill counter of memory.events", "[cgroup]") {
  CHECK(OomKillCount("low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\n"
                     "oom_group_kill 0\n") == 2);
  CHECK(OomKillCount("low 0\nhigh 0\nmax 0\noom 0\n") == 0);
  CHECK(OomKillCount("") == 0);
  // oom_group_kill is another counter.
  CHECK(OomKillCount("oom_group_kill 5\n") == 0);
}

TEST_CASE("which rank ends are out of memory", "[cgroup]") {
  struct Row {
    int exit_code;
    int signal;
    uint64_t before;
    uint64_t now;
    bool out_of_memory;
  };
  const Row rows[] = {
      {0, 9, 0, 1, true},    // the rank itself was picked
      {137, 0, 0, 1, true},  // its child was, and the script said so
      {1, 0, 3, 4, true},
      {0, 9, 0, 0, false},  // killed, but not by the OOM killer
      {0, 9, 2, 2, false},  // an OOM kill an earlier rank end accounted for
      {0, 0, 0, 1, false},  // a child was OOM-killed and the rank coped
  };
  for (const Row& row : rows) {
    INFO("exit " << row.exit_code << " signal " << row.signal << " oom "
                 << row.before << "->" << row.now);
    CHECK(ExitWasOutOfMemory(row.exit_code, row.signal, row.before, row.now) ==
          row.out_of_memory);
  }
}

}  // namespace cgroup_text_test
}  // namespace gantry::agent
