// Per-job cgroups (cgroup v2) on a node.
//
// Each job attempt gets a cgroup, NODE_DIR/job_<job>.<attempt>, holding
// every process of its ranks on this node, however they daemonise: it
// carries the job's CPU and memory limits (where the cpu and memory
// controllers are available), is killed as a whole (cgroup.kill) when the
// job is stopped or its last rank here ends, and its memory.events tells an
// out-of-memory kill from any other SIGKILL.
//
// NODE_DIR is <cgroup2 mount><root>/<node name>: the node name keeps two
// agents sharing one machine (tests) apart. The default root is the agent's
// own cgroup plus "/gantry"; under systemd the unit needs Delegate=yes, and
// the agent moves itself into a leaf ("agent") so that controllers can be
// enabled below its cgroup (cgroup v2 allows no processes in a cgroup that
// hands controllers down).
//
// Where there is no cgroup v2, Open logs one warning and returns null: the
// launcher then stops ranks by process group and sets no limits. Where
// cgroup v2 lacks the cpu or memory controller (a hybrid v1/v2 host), Open
// warns and the job cgroups still track and kill processes, without limits
// or OOM detection.
//
// Thread-safe: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"

namespace gantry::agent {

struct CgroupSettings {
  bool enabled = true;  // --cgroups=auto (true) or off
  // Under the cgroup2 mount ("/gantry"); empty: <agent's cgroup>/gantry.
  std::string root;
  std::string node_name;
  // Injectable for tests: where the mounts and the agent's cgroup are read.
  std::string mountinfo_path = "/proc/self/mountinfo";
  std::string proc_cgroup_path = "/proc/self/cgroup";
};

// A job's share of this node, as cgroup limits; 0: unlimited.
struct JobCgroupLimits {
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
};

class JobCgroups {
 public:
  // Finds cgroup v2, prepares NODE_DIR and enables what it can; null (after
  // a warning saying what falls back) when job cgroups cannot be used.
  static std::unique_ptr<JobCgroups> Open(const CgroupSettings& settings);

  // A tree at `node_dir` (any directory, for tests) whose job cgroups have
  // `controllers` ("cpu", "memory") available.
  JobCgroups(std::string node_dir, std::set<std::string> controllers);

  const std::string& node_dir() const { return node_dir_; }
  bool has_controller(const std::string& name) const {
    return controllers_.count(name) > 0;
  }

  // Creates the cgroup of job attempt `key` ("<job>.<attempt>") with its
  // limits and returns the path of its cgroup.procs, which each rank writes
  // itself into before exec. Errors: UNAVAILABLE, naming the file and why.
  // The cgroup.procs of the job attempt's existing cgroup (a step joins
  // the cgroup its job's script already runs in).
  // The directory of job attempt `key`'s cgroup (sstat reads it).
  std::string Directory(const std::string& key) const { return JobDir(key); }
  std::string ProcsPath(const std::string& key) const {
    return JobDir(key) + "/cgroup.procs";
  }
  absl::StatusOr<std::string> Create(const std::string& key,
                                     const JobCgroupLimits& limits);

  // Sends `signal` to every process in the job's cgroup; SIGKILL goes
  // through cgroup.kill, which also catches processes forked meanwhile.
  void Signal(const std::string& key, int signal) const;

  // Whether this rank end is an out-of-memory failure (see
  // ExitWasOutOfMemory): the job's oom_kill counter is compared with its
  // value at the previous rank end (or at Create).
  bool RankExitWasOutOfMemory(const std::string& key, int exit_code,
                              int signal);

  // Kills whatever is left in the job's cgroup and removes it.
  void Remove(const std::string& key);

  // At agent start: kills the job cgroups named in `keys` (an earlier
  // agent process's ranks; see RankLauncher::CleanUpLeftovers) and removes
  // every job cgroup that is empty. Returns how many it killed.
  int RemoveLeftovers(const std::set<std::string>& keys);

 private:
  std::string JobDir(const std::string& key) const;
  // Waits (briefly) for the cgroup to empty, then removes it.
  absl::Status RemoveWhenEmpty(const std::string& dir) const;

  const std::string node_dir_;
  const std::set<std::string> controllers_;
  bool has_kill_file_ = false;  // cgroup.kill: Linux 5.14 and later

  mutable Mutex mutex_;
  std::map<std::string, uint64_t> oom_kills_seen_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace gantry::agent
