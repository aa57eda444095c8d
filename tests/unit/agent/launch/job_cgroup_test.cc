// Job cgroups on a fake tree (a temp dir standing in for the cgroup2 mount:
// the test writes memory.events and reads what the agent wrote), and, where
// the test runs as root on a host with cgroup v2, on the real tree: a
// process that left its session is still killed with its job.
#include "agent/launch/job_cgroup.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/launch/cgroup_text.h"
#include "tests/unit/support/skip.h"
#include "tests/unit/support/temp_dir.h"

namespace gantry::agent {
namespace job_cgroup_test {

namespace fs = std::filesystem;

using gantry::testing::TempDir;

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A child that waits to be signalled, and dies of the signal: it comes
// with the test runner's handlers (Catch's report of a fatal signal), so
// the signals the tests send are blocked across the fork until the child
// has put the defaults back. Without that, a SIGTERM that came before
// them ran Catch's handler in the child (TSan then ended it with its own
// exit status).
pid_t StartSleeper() {
  sigset_t blocked;
  sigset_t before;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGINT);
  ::pthread_sigmask(SIG_BLOCK, &blocked, &before);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    ::pause();
    ::_exit(0);
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return pid;
}

TEST_CASE("a job cgroup carries the job's CPU and memory limits", "[cgroup]") {
  TempDir tree;
  JobCgroups cgroups(tree.path, {"cpu", "memory"});
  absl::StatusOr<std::string> procs = cgroups.Create("7.1", {4, 64});
  REQUIRE(procs.ok());
  CHECK(*procs == tree.path + "/job_7.1/cgroup.procs");
  CHECK(Read(tree.path + "/job_7.1/cpu.max") == "400000 100000");
  CHECK(Read(tree.path + "/job_7.1/memory.max") == "67108864");

  SECTION("no request, no limit") {
    REQUIRE(cgroups.Create("8.1", {0, 0}).ok());
    CHECK_FALSE(fs::exists(tree.path + "/job_8.1/cpu.max"));
    CHECK_FALSE(fs::exists(tree.path + "/job_8.1/memory.max"));
  }
  SECTION("no controllers, no limits, still a cgroup") {
    TempDir bare_tree;
    JobCgroups bare(bare_tree.path, {});
    REQUIRE(bare.Create("9.1", {4, 64}).ok());
    CHECK(fs::is_directory(bare_tree.path + "/job_9.1"));
    CHECK_FALSE(fs::exists(bare_tree.path + "/job_9.1/cpu.max"));
    CHECK_FALSE(fs::exists(bare_tree.path + "/job_9.1/memory.max"));
  }
  SECTION("a cgroup that cannot be made is an error naming it") {
    JobCgroups missing(tree.path + "/no/such/dir", {});
    absl::StatusOr<std::string> failed = missing.Create("1.1", {});
    REQUIRE_FALSE(failed.ok());
    CHECK_THAT(std::string(failed.status().message()),
               Catch::Contains("cannot create cgroup " + tree.path +
                               "/no/such/dir/job_1.1"));
  }
}

TEST_CASE("an OOM kill is told from memory.events", "[cgroup]") {
  TempDir tree;
  JobCgroups cgroups(tree.path, {"memory"});
  REQUIRE(cgroups.Create("3.2", {0, 128}).ok());
  const std::string events = tree.path + "/job_3.2/memory.events";
  Write(events, "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
  CHECK_FALSE(cgroups.RankExitWasOutOfMemory("3.2", 0, SIGKILL));

  Write(events, "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n");
  CHECK(cgroups.RankExitWasOutOfMemory("3.2", 0, SIGKILL));
  // The next rank to end (killed by the agent after the first failed) is
  // not blamed for the same kill.
  CHECK_FALSE(cgroups.RankExitWasOutOfMemory("3.2", 0, SIGKILL));

  Write(events, "oom 2\noom_kill 2\n");
  CHECK_FALSE(cgroups.RankExitWasOutOfMemory("3.2", 0, 0));  // it coped
  Write(events, "oom 3\noom_kill 3\n");
  CHECK(cgroups.RankExitWasOutOfMemory("3.2", 137, 0));

  SECTION("without the memory controller nothing is OOM") {
    JobCgroups no_memory(tree.path, {});
    REQUIRE(no_memory.Create("4.1", {}).ok());
    Write(tree.path + "/job_4.1/memory.events", "oom_kill 1\n");
    CHECK_FALSE(no_memory.RankExitWasOutOfMemory("4.1", 0, SIGKILL));
  }
}

TEST_CASE("a job cgroup's processes are signalled", "[cgroup]") {
  TempDir tree;
  SECTION("SIGKILL goes through cgroup.kill") {
    Write(tree.path + "/cgroup.kill", "");  // the kernel has it (5.14+)
    JobCgroups cgroups(tree.path, {});
    REQUIRE(cgroups.Create("5.1", {}).ok());
    cgroups.Signal("5.1", SIGKILL);
    CHECK(Read(tree.path + "/job_5.1/cgroup.kill") == "1");
  }
  SECTION("other signals go to each process in cgroup.procs") {
    JobCgroups cgroups(tree.path, {});
    REQUIRE(cgroups.Create("6.1", {}).ok());
    pid_t sleeper = StartSleeper();
    Write(tree.path + "/job_6.1/cgroup.procs", std::to_string(sleeper) + "\n");
    cgroups.Signal("6.1", SIGTERM);
    int status = 0;
    REQUIRE(::waitpid(sleeper, &status, 0) == sleeper);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);
  }
}

TEST_CASE("leftover job cgroups of an earlier agent", "[cgroup]") {
  TempDir tree;
  Write(tree.path + "/cgroup.kill", "");
  fs::create_directories(tree.path + "/job_4.1");
  Write(tree.path + "/job_4.1/cgroup.kill", "");
  fs::create_directories(tree.path + "/job_9.1");  // empty: just removed
  fs::create_directories(tree.path + "/other");    // not a job's: kept
  JobCgroups cgroups(tree.path, {});
  CHECK(cgroups.RemoveLeftovers({"4.1"}) == 1);
  CHECK(Read(tree.path + "/job_4.1/cgroup.kill") == "1");
  CHECK_FALSE(fs::exists(tree.path + "/job_9.1"));
  CHECK(fs::exists(tree.path + "/other"));
}

struct FakeHost {
  TempDir dir;
  std::string mount = dir.path + "/mnt";
  CgroupSettings settings;
  explicit FakeHost(const std::string& own_cgroup) {
    fs::create_directories(mount);
    Write(dir.path + "/mountinfo",
          "30 22 0:27 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n40 30 0:37 / " +
              mount + " rw,relatime - cgroup2 cgroup2 rw\n");
    Write(dir.path + "/cgroup", "1:cpu:/\n0::" + own_cgroup + "\n");
    settings.node_name = "node07";
    settings.mountinfo_path = dir.path + "/mountinfo";
    settings.proc_cgroup_path = dir.path + "/cgroup";
  }
};

TEST_CASE("Open finds the tree and says what falls back", "[cgroup]") {
  SECTION("off") {
    FakeHost host("/");
    host.settings.enabled = false;
    CHECK(JobCgroups::Open(host.settings) == nullptr);
  }
  SECTION("no cgroup v2") {
    FakeHost host("/");
    Write(host.settings.mountinfo_path,
          "31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
    CHECK(JobCgroups::Open(host.settings) == nullptr);
  }
  SECTION("the agent in the root cgroup: jobs under /gantry/NODE") {
    FakeHost host("/");
    std::unique_ptr<JobCgroups> cgroups = JobCgroups::Open(host.settings);
    REQUIRE(cgroups != nullptr);
    CHECK(cgroups->node_dir() == host.mount + "/gantry/node07");
    CHECK(fs::is_directory(cgroups->node_dir()));
    // Nothing in the fake hands controllers down: no limits.
    CHECK_FALSE(cgroups->has_controller("cpu"));
    CHECK_FALSE(cgroups->has_controller("memory"));
  }
  SECTION("controllers enabled for the node's jobs are used") {
    FakeHost host("/");
    fs::create_directories(host.mount + "/gantry/node07");
    Write(host.mount + "/gantry/node07/cgroup.subtree_control",
          "cpu memory pids\n");
    std::unique_ptr<JobCgroups> cgroups = JobCgroups::Open(host.settings);
    REQUIRE(cgroups != nullptr);
    CHECK(cgroups->has_controller("cpu"));
    CHECK(cgroups->has_controller("memory"));
  }
  SECTION("a systemd unit's cgroup: the agent moves into a leaf") {
    FakeHost host("/system.slice/gantry-agent.service");
    const std::string unit = host.mount + "/system.slice/gantry-agent.service";
    fs::create_directories(unit);
    std::unique_ptr<JobCgroups> cgroups = JobCgroups::Open(host.settings);
    REQUIRE(cgroups != nullptr);
    CHECK(cgroups->node_dir() == unit + "/gantry/node07");
    CHECK(Read(unit + "/agent/cgroup.procs") == "0");
  }
  SECTION("--cgroup-root") {
    FakeHost host("/system.slice/gantry-agent.service");
    host.settings.root = "/gantry-test/run1";
    std::unique_ptr<JobCgroups> cgroups = JobCgroups::Open(host.settings);
    REQUIRE(cgroups != nullptr);
    CHECK(cgroups->node_dir() == host.mount + "/gantry-test/run1/node07");
  }
}

std::optional<std::string> RealCgroup2Mount() {
  return FindCgroup2Mount(Read("/proc/self/mountinfo"));
}

// The real thing, where the test may: a rank that daemonised (setsid, a
// new session and process group) is still in its job's cgroup, and goes
// when the job's cgroup is removed.
TEST_CASE("on the real cgroup2 tree a daemonised process dies with its job",
          "[cgroup][real]") {
  std::optional<std::string> mount = RealCgroup2Mount();
  if (::geteuid() != 0 || !mount) {
    GANTRY_SKIP("needs root and a cgroup2 mount");
  }
  CgroupSettings settings;
  settings.root = "/gantry-unit-" + std::to_string(::getpid());
  settings.node_name = "node01";
  std::unique_ptr<JobCgroups> cgroups = JobCgroups::Open(settings);
  if (cgroups == nullptr) {
    GANTRY_SKIP("cannot create cgroups here");
  }
  absl::StatusOr<std::string> procs = cgroups->Create("1.1", {2, 0});
  REQUIRE(procs.ok());
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t rank = ::fork();
  if (rank == 0) {
    std::ofstream(*procs) << "0";
    pid_t daemon = ::fork();
    if (daemon == 0) {
      ::setsid();
      ::pause();
      ::_exit(0);
    }
    (void)!::write(pipe_fds[1], &daemon, sizeof daemon);
    ::pause();
    ::_exit(0);
  }
  pid_t daemon = 0;
  REQUIRE(::read(pipe_fds[0], &daemon, sizeof daemon) == sizeof daemon);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  const std::string job_path =
      cgroups->node_dir().substr(mount->size()) + "/job_1.1";
  CHECK_THAT(Read("/proc/" + std::to_string(daemon) + "/cgroup"),
             Catch::Contains("0::" + job_path));

  cgroups->Remove("1.1");
  int status = 0;
  REQUIRE(::waitpid(rank, &status, 0) == rank);
  CHECK(WTERMSIG(status) == SIGKILL);
  // The daemon is not our child (it belongs to init now): it is gone when
  // /proc has no live process of that pid.
  auto daemon_alive = [daemon] {
    std::string stat = Read("/proc/" + std::to_string(daemon) + "/stat");
    size_t close = stat.rfind(')');
    return close != std::string::npos && stat.size() > close + 2 &&
           stat[close + 2] != 'Z';
  };
  for (int i = 0; i < 200 && daemon_alive(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK_FALSE(daemon_alive());
  CHECK_FALSE(fs::exists(cgroups->node_dir() + "/job_1.1"));
  ::rmdir(cgroups->node_dir().c_str());
  ::rmdir((*mount + settings.root).c_str());
}

}  // namespace job_cgroup_test
}  // namespace gantry::agent
