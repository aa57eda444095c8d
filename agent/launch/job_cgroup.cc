#include "agent/launch/job_cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/launch/cgroup_text.h"
#include "common/log.h"

namespace gantry::agent {
namespace {

namespace fs = std::filesystem;

const std::set<std::string>& WantedControllers() {
  static const std::set<std::string> kWanted = {"cpu", "memory"};
  return kWanted;
}

std::string ReadCgroupFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// One write(2), as the kernel wants for cgroup interface files. O_CREAT
// only matters for test trees in ordinary directories.
absl::Status WriteInterfaceFile(const std::string& path,
                                const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  ssize_t written = ::write(fd, value.data(), value.size());
  int error = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(value.size())) {
    return absl::UnavailableError(absl::StrCat(
        "cannot write \"", value, "\" to ", path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

// Hands the wanted controllers that `dir` has down to its children. Best
// effort: the caller checks what the node dir ends up with.
void EnableControllersBelow(const std::string& dir) {
  std::set<std::string> available =
      ParseControllerList(ReadCgroupFile(dir + "/cgroup.controllers"));
  std::set<std::string> enabled =
      ParseControllerList(ReadCgroupFile(dir + "/cgroup.subtree_control"));
  for (const std::string& name : WantedControllers()) {
    if (!available.count(name) || enabled.count(name)) continue;
    absl::Status status =
        WriteInterfaceFile(dir + "/cgroup.subtree_control", "+" + name);
    if (!status.ok()) {
      log::Debug("cannot enable a cgroup controller",
                 {{"controller", name}, {"error", status.ToString()}});
    }
  }
}

std::string ParentPath(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string JoinUnderMount(const std::string& mount, const std::string& path) {
  return path == "/" ? mount : mount + path;
}

}  // namespace

std::unique_ptr<JobCgroups> JobCgroups::Open(const CgroupSettings& settings) {
  constexpr const char* kNoCgroupFallback =
      "no CPU or memory limits, no out-of-memory detection, and ranks are "
      "stopped by process group (a process that leaves its group escapes)";
  if (!settings.enabled) {
    log::Warn("job cgroups are off (--cgroups=off)",
              {{"fallback", kNoCgroupFallback}});
    return nullptr;
  }
  std::optional<std::string> mount =
      FindCgroup2Mount(ReadCgroupFile(settings.mountinfo_path));
  if (!mount) {
    log::Warn("no cgroup v2 file system is mounted: jobs run without cgroups",
              {{"fallback", kNoCgroupFallback}});
    return nullptr;
  }
  std::string root = settings.root;
  if (root.empty()) {
    std::optional<std::string> own =
        UnifiedCgroupPath(ReadCgroupFile(settings.proc_cgroup_path));
    if (!own) {
      log::Warn("cannot tell which cgroup v2 the agent is in (no 0:: line in " +
                    settings.proc_cgroup_path + "); give --cgroup-root",
                {{"fallback", kNoCgroupFallback}});
      return nullptr;
    }
    const std::string base = JoinUnderMount(*mount, *own);
    if (*own != "/") {
      // cgroup v2 hands controllers down only from a cgroup without
      // processes: leave the unit's cgroup to a leaf of it.
      std::error_code ignored;
      fs::create_directories(base + "/agent", ignored);
      absl::Status moved =
          WriteInterfaceFile(base + "/agent/cgroup.procs", "0");
      if (!moved.ok()) {
        log::Debug("cannot move the agent into a leaf cgroup",
                   {{"error", moved.ToString()}});
      }
    }
    root = (*own == "/" ? "" : *own) + "/gantry";
  }
  if (root.empty() || root[0] != '/') root = "/" + root;
  const std::string root_dir = JoinUnderMount(*mount, root);
  const std::string node_dir = root_dir + "/" + settings.node_name;
  std::error_code error;
  fs::create_directories(node_dir, error);
  if (error) {
    log::Warn("cannot create the node's cgroup: jobs run without cgroups",
              {{"cgroup", node_dir},
               {"error", error.message()},
               {"fallback", kNoCgroupFallback}});
    return nullptr;
  }
  for (const std::string& dir :
       {JoinUnderMount(*mount, ParentPath(root)), root_dir, node_dir}) {
    EnableControllersBelow(dir);
  }
  std::set<std::string> enabled =
      ParseControllerList(ReadCgroupFile(node_dir + "/cgroup.subtree_control"));
  std::set<std::string> usable;
  std::vector<std::string> missing;
  for (const std::string& name : WantedControllers()) {
    if (enabled.count(name)) {
      usable.insert(name);
    } else {
      missing.push_back(name);
    }
  }
  if (!missing.empty()) {
    const std::string top = ReadCgroupFile(*mount + "/cgroup.controllers");
    log::Warn(
        absl::StrCat("cgroup v2 has no ", absl::StrJoin(missing, ", "),
                     " controller here: jobs run without those limits"),
        {{"cgroup", node_dir},
         {"controllers_at_mount", std::string(absl::StripAsciiWhitespace(top))},
         {"fallback",
          absl::StrCat(usable.count("cpu") ? "" : "no CPU limit; ",
                       usable.count("memory")
                           ? ""
                           : "no memory limit and no out-of-memory "
                             "detection; ",
                       "job cgroups still hold and kill every process of a "
                       "job")},
         {"hint",
          "on a hybrid cgroup v1/v2 host these controllers are bound to v1 "
          "(boot with systemd.unified_cgroup_hierarchy=1); under systemd the "
          "agent's unit needs Delegate=yes"}});
  } else {
    log::Info("job cgroups ready",
              {{"cgroup", node_dir}, {"controllers", "cpu,memory"}});
  }
  return std::make_unique<JobCgroups>(node_dir, usable);
}

JobCgroups::JobCgroups(std::string node_dir, std::set<std::string> controllers)
    : node_dir_(std::move(node_dir)), controllers_(std::move(controllers)) {
  has_kill_file_ = ::access((node_dir_ + "/cgroup.kill").c_str(), F_OK) == 0;
}

std::string JobCgroups::JobDir(const std::string& key) const {
  return absl::StrCat(node_dir_, "/job_", key);
}

absl::StatusOr<std::string> JobCgroups::Create(const std::string& key,
                                               const JobCgroupLimits& limits) {
  const std::string dir = JobDir(key);
  if (::mkdir(dir.c_str(), 0755) != 0) {
    if (errno != EEXIST) {
      return absl::UnavailableError(absl::StrCat("cannot create cgroup ", dir,
                                                 ": ", std::strerror(errno)));
    }
    // Left by an earlier agent process: nothing of it may run on.
    Signal(key, SIGKILL);
  }
  std::vector<std::pair<std::string, std::string>> settings;
  if (has_controller("cpu") && limits.cpus > 0) {
    settings.push_back({"cpu.max", CpuMaxFor(limits.cpus)});
  }
  if (has_controller("memory") && limits.mem_mb > 0) {
    settings.push_back({"memory.max", MemoryMaxFor(limits.mem_mb)});
  }
  for (const auto& [file, value] : settings) {
    absl::Status status =
        WriteInterfaceFile(absl::StrCat(dir, "/", file), value);
    if (!status.ok()) {
      ::rmdir(dir.c_str());
      return status;
    }
  }
  if (has_controller("memory") && limits.mem_mb > 0 &&
      ::access((dir + "/memory.swap.max").c_str(), F_OK) == 0) {
    // --mem bounds what the job holds, not what it may page out: without
    // this a job over its limit swaps instead of being stopped.
    (void)WriteInterfaceFile(dir + "/memory.swap.max", "0");
  }
  const uint64_t oom_kills =
      OomKillCount(ReadCgroupFile(dir + "/memory.events"));
  MutexLock lock(mutex_);
  oom_kills_seen_[key] = oom_kills;
  return dir + "/cgroup.procs";
}

void JobCgroups::Signal(const std::string& key, int signal) const {
  const std::string dir = JobDir(key);
  if (signal == SIGKILL && has_kill_file_ &&
      WriteInterfaceFile(dir + "/cgroup.kill", "1").ok()) {
    return;
  }
  // Without cgroup.kill a process may fork between reading and killing:
  // SIGKILL goes round until the cgroup is empty (a few passes at most).
  const int passes = signal == SIGKILL ? 10 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    bool any = false;
    std::istringstream pids(ReadCgroupFile(dir + "/cgroup.procs"));
    for (pid_t pid = 0; pids >> pid;) {
      if (pid > 1) ::kill(pid, signal);
      any = true;
    }
    if (!any) break;
  }
}

bool JobCgroups::RankExitWasOutOfMemory(const std::string& key, int exit_code,
                                        int signal) {
  if (!has_controller("memory")) return false;
  const uint64_t now =
      OomKillCount(ReadCgroupFile(JobDir(key) + "/memory.events"));
  MutexLock lock(mutex_);
  uint64_t& seen = oom_kills_seen_[key];
  const bool out_of_memory = ExitWasOutOfMemory(exit_code, signal, seen, now);
  seen = std::max(seen, now);
  return out_of_memory;
}

absl::Status JobCgroups::RemoveWhenEmpty(const std::string& dir) const {
  // Killed processes leave the cgroup as they exit, which takes a moment.
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (ReadCgroupFile(dir + "/cgroup.events").find("populated 1") !=
             std::string::npos &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) {
    return absl::UnavailableError(
        absl::StrCat("cannot remove cgroup ", dir, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

void JobCgroups::Remove(const std::string& key) {
  Signal(key, SIGKILL);
  absl::Status removed = RemoveWhenEmpty(JobDir(key));
  if (!removed.ok()) {
    log::Warn("job cgroup left behind (the next agent start removes it)",
              {{"error", removed.ToString()}});
  }
  MutexLock lock(mutex_);
  oom_kills_seen_.erase(key);
}

int JobCgroups::RemoveLeftovers(const std::set<std::string>& keys) {
  int killed = 0;
  std::error_code error;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(node_dir_, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind("job_", 0) != 0) continue;
    const std::string key = name.substr(4);
    if (keys.count(key)) {
      Signal(key, SIGKILL);
      ++killed;
      log::Warn("killed the cgroup of a job an earlier agent process ran",
                {{"cgroup", entry.path().string()}});
      (void)RemoveWhenEmpty(entry.path().string());
    } else {
      // Populated: another agent's (tests run several per machine); rmdir
      // refuses, which is what we want.
      ::rmdir(entry.path().c_str());
    }
  }
  return killed;
}

}  // namespace gantry::agent
