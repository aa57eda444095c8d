#include "agent/launch/rank_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/launch/command_search.h"
#include "agent/launch/job_directory.h"
#include "agent/launch/job_usage.h"
#include "agent/launch/rank_child.h"
#include "agent/launch/rank_progress.h"
#include "agent/launch/sanitized_environment.h"
#include "agent/launch/step_pty.h"
#include "agent/launch/task_pid_slot.h"
#include "common/errno_text.h"
#include "common/log.h"
#include "common/step_io_address.h"

namespace gantry::agent {
namespace {

namespace fs = std::filesystem;

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct ProcessStat {
  pid_t group = 0;          // field 5: process group
  uint64_t start_time = 0;  // field 22: clock ticks since boot
};

// Fields of /proc/PID/stat. The start time together with the pid names one
// process, even after the pid is reused.
std::optional<ProcessStat> ReadProcessStat(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 > line.size())
    return std::nullopt;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  ProcessStat stat;
  // Fields after the command start at field 3 (state).
  for (int index = 3; index <= 22 && fields >> field; ++index) {
    if (index == 5) stat.group = static_cast<pid_t>(std::atol(field.c_str()));
    if (index == 22) {
      stat.start_time = std::strtoull(field.c_str(), nullptr, 10);
      return stat;
    }
  }
  return std::nullopt;
}

std::string ProcessStartTime(pid_t pid) {
  std::optional<ProcessStat> stat = ReadProcessStat(pid);
  return stat ? absl::StrCat(stat->start_time) : "";
}

// Names a job attempt's directory, its cgroup and (with the rank) its
// records.
std::string JobDirName(uint64_t job_id, uint32_t attempt) {
  return absl::StrCat(job_id, ".", attempt);
}

std::string JobDirName(const v1::RankId& rank) {
  return JobDirName(rank.job_id(), rank.attempt());
}

// Null-terminated pointers to `strings` (which must outlive them), as
// execve takes them.
std::vector<char*> PointersTo(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Where task 0 of `launch` sends its stderr (see TakeKillNoticeTargets).
KillNoticeTarget NoticeTargetOf(const v1::LaunchRanks& launch,
                                const RankIdentity& identity) {
  KillNoticeTarget target;
  target.job_id = launch.job_id();
  target.step = launch.step();
  target.identity = identity;
  target.io_address = launch.io_address();
  target.io_token = launch.io_token();
  if (target.io_address.empty()) {
    // Opened by the rank after it moved to its working directory.
    const std::string& path = launch.error_path().empty() ? launch.output_path()
                                                          : launch.error_path();
    target.error_path = path.empty() || path.front() == '/'
                            ? path
                            : absl::StrCat(launch.working_dir(), "/", path);
  }
  return target;
}

}  // namespace

v1::RankId RankIdOf(const v1::LaunchRanks& launch, const v1::RankLaunch& rank) {
  v1::RankId id;
  id.set_job_id(launch.job_id());
  id.set_attempt(launch.attempt());
  id.set_rank(rank.rank());
  id.set_step(launch.step());
  return id;
}

absl::StatusOr<RankIdentity> ResolveLaunchIdentity(
    const v1::LaunchRanks& launch, const std::string& node_name) {
  IdentityRequest request;
  request.uid = launch.uid();
  request.gid = launch.gid();
  request.user = launch.user();
  request.node = node_name;
  request.agent_is_root = ::geteuid() == 0;
  request.agent_uid = ::geteuid();
  return ResolveRankIdentity(request, SystemUserDatabase());
}

RankLauncher::RankLauncher(RankLauncherOptions options, StartCallback on_start,
                           ExitCallback on_exit)
    : work_dir_(std::move(options.work_dir)),
      node_name_(std::move(options.node_name)),
      cgroups_(std::move(options.cgroups)),
      on_start_(std::move(on_start)),
      on_exit_(std::move(on_exit)) {
  std::error_code error;
  fs::create_directories(work_dir_ + "/ranks", error);
  fs::create_directories(work_dir_ + "/jobs", error);
  // The first user lookup loads the NSS modules (libnss_systemd and what
  // it links): paid here, at start-up, rather than in the first launch.
  const UserDatabase& users = SystemUserDatabase();
  if (std::optional<UserEntry> self = users.FindUser(::geteuid())) {
    users.GroupsOf(self->name, self->gid);
  }
  reaper_ = std::thread([this] { ReapLoop(); });
  escalator_ = std::thread([this] { EscalateLoop(); });
}

RankLauncher::~RankLauncher() { Shutdown(5); }

void RankLauncher::Shutdown(uint32_t grace_seconds) {
  {
    MutexLock lock(mutex_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  KillAllAndWait(grace_seconds);
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  changed_.NotifyAll();
  // The reaper returns once nothing is left to reap: a rank that outlived
  // its SIGKILL (stuck in the kernel) holds the shutdown until it goes,
  // since its exit is still to be handed over.
  reaper_.join();
  escalator_.join();
}

int RankLauncher::CleanUpLeftovers() {
  // Each record names a rank's process group (its leader's pid) and the
  // leader's start time. The leader itself is usually gone (it died with
  // the agent), but what it started may still run in its group: kill every
  // process in the group that started no earlier than the leader, which
  // rules out an unrelated group that reused the number.
  std::vector<std::pair<pid_t, uint64_t>> groups;
  std::set<std::string> job_keys;
  std::error_code error;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(work_dir_ + "/ranks", error)) {
    std::ifstream in(entry.path());
    pid_t pid = 0;
    uint64_t start_time = 0;
    if (in >> pid >> start_time && pid > 1) groups.push_back({pid, start_time});
    // Named JOB.ATTEMPT.RANK: the job cgroup is JOB.ATTEMPT.
    const std::string name = entry.path().filename().string();
    job_keys.insert(name.substr(0, name.rfind('.')));
    fs::remove(entry.path(), error);
  }
  // The cgroups first: they hold what left the ranks' process groups too.
  int killed = cgroups_ ? cgroups_->RemoveLeftovers(job_keys) : 0;
  if (!groups.empty()) {
    for (const fs::directory_entry& entry :
         fs::directory_iterator("/proc", error)) {
      pid_t pid = 0;
      if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
      std::optional<ProcessStat> stat = ReadProcessStat(pid);
      if (!stat) continue;
      for (const auto& [group, leader_start] : groups) {
        if (stat->group == group && stat->start_time >= leader_start) {
          ::kill(pid, SIGKILL);
          ++killed;
          log::Warn("killed a process left by a rank of an earlier agent",
                    {{"pid", pid}, {"group", group}});
        }
      }
    }
  }
  for (const fs::directory_entry& entry :
       fs::directory_iterator(work_dir_ + "/jobs", error)) {
    RemoveJobDirectory(entry.path().string());
  }
  return killed;
}

absl::Status RankLauncher::PrepareLaunch(const v1::LaunchRanks& launch,
                                         const std::string& job_dir,
                                         const std::string& script_path,
                                         RankIdentity& identity,
                                         std::string& cgroup_procs_path) {
  absl::StatusOr<RankIdentity> resolved =
      ResolveLaunchIdentity(launch, node_name_);
  if (!resolved.ok()) return resolved.status();
  identity = *std::move(resolved);
  if (launch.exec_command()) {
    // Nothing to write: the command is executed as it is.
    if (launch.script_args().empty()) {
      return absl::InvalidArgumentError("the step has no command to run");
    }
  } else if (absl::Status written =
                 WriteJobFile(job_dir, script_path.substr(job_dir.size() + 1),
                              launch.script(), identity);
             !written.ok()) {
    return written;
  }
  cgroup_procs_path.clear();
  const std::string job_key = JobDirName(launch.job_id(), launch.attempt());
  bool attempt_runs_here = false;
  {
    MutexLock lock(mutex_);
    for (const auto& [pid, rank] : live_) {
      if (JobDirName(rank.id) == job_key) attempt_runs_here = true;
    }
  }
  if (cgroups_ && attempt_runs_here) {
    // A step beside the running script (or another step): the same cgroup;
    // making it anew would kill what runs in it.
    cgroup_procs_path = cgroups_->ProcsPath(job_key);
  } else if (cgroups_) {
    JobCgroupLimits limits;
    limits.cpus = launch.cpus();
    limits.mem_mb = launch.mem_mb();
    absl::StatusOr<std::string> procs =
        cgroups_->Create(JobDirName(launch.job_id(), launch.attempt()), limits);
    if (!procs.ok()) return procs.status();
    cgroup_procs_path = *procs;
  }
  return absl::OkStatus();
}

void RankLauncher::Launch(const v1::LaunchRanks& launch) {
  const std::string job_key = JobDirName(launch.job_id(), launch.attempt());
  const std::string job_dir = absl::StrCat(work_dir_, "/jobs/", job_key);
  // A step's command file beside the script, which may still be running
  // (and which a shell reads as it goes, so it is never rewritten).
  const std::string script_path =
      launch.step() == 0 ? job_dir + "/script"
                         : absl::StrCat(job_dir, "/step-", launch.step());
  RankIdentity identity;
  std::string cgroup_procs_path;
  const absl::Status prepared =
      PrepareLaunch(launch, job_dir, script_path, identity, cgroup_procs_path);
  std::vector<std::pair<v1::RankId, pid_t>> started;
  std::vector<std::pair<v1::RankId, std::string>> failed;
  bool refused = false;
  {
    MutexLock lock(mutex_);
    // Checked under the lock that Shutdown takes: a rank either starts
    // before Shutdown looks for ranks to stop, or not at all.
    refused = shut_down_;
    for (const v1::RankLaunch& rank : launch.ranks()) {
      const v1::RankId id = RankIdOf(launch, rank);
      if (refused) {
        failed.push_back(
            {id, absl::StrCat("the agent on ", node_name_, " is stopping")});
        continue;
      }
      if (!prepared.ok()) {
        failed.push_back({id, std::string(prepared.message())});
        continue;
      }
      pid_t pid = 0;
      // The rank's progress file, empty and its own (rank_progress.h).
      absl::Status status =
          WriteJobFile(job_dir, ProgressFileName(id), "", identity);
      if (status.ok()) {
        status = StartOne(launch, rank, script_path, identity,
                          cgroup_procs_path, pid);
      }
      if (!status.ok()) {
        failed.push_back({id, std::string(status.message())});
        continue;
      }
      // JOB.ATTEMPT.RANK, or JOB.ATTEMPT.sSTEP-TASK: the last dot ends the
      // job cgroup's name either way (see CleanUpLeftovers).
      LiveRank live{
          id, pid,
          launch.step() == 0
              ? absl::StrCat(work_dir_, "/ranks/", job_key, ".", rank.rank())
              : absl::StrCat(work_dir_, "/ranks/", job_key, ".s", launch.step(),
                             "-", rank.rank()),
          rank.rank() == 0 ? std::optional(NoticeTargetOf(launch, identity))
                           : std::nullopt};
      std::ofstream record(live.record_path, std::ios::trunc);
      record << pid << " " << ProcessStartTime(pid) << "\n";
      live_.emplace(pid, std::move(live));
      started.push_back({id, pid});
    }
  }
  changed_.NotifyAll();
  for (const auto& [id, pid] : started) {
    log::Info("rank started", {{"job", id.job_id()},
                               {"attempt", id.attempt()},
                               {"step", id.step()},
                               {"rank", id.rank()},
                               {"pid", pid}});
    on_start_(id, pid);
  }
  // The failures go first: the controller is to hear why the launch failed
  // before it hears of the ranks killed because of it.
  for (const auto& [id, message] : failed) {
    log::Warn("rank could not start",
              {{"job", id.job_id()}, {"rank", id.rank()}, {"error", message}});
    RankOutcome outcome;
    outcome.exit_code = 127;
    outcome.launch_failed = true;
    outcome.node_fault = refused;
    outcome.message = message;
    on_exit_(id, outcome);
  }
  if (failed.empty()) return;
  MutexLock lock(mutex_);
  if (started.empty()) {
    // Nothing runs, so the reaper will never tidy up after this attempt
    // (unless other ranks or steps of it still run here).
    const bool others = std::any_of(live_.begin(), live_.end(), [&](auto& l) {
      return JobDirName(l.second.id) == job_key;
    });
    if (!others) {
      reclaimer_.Discard(job_dir);
      if (cgroups_ && prepared.ok()) cgroups_->Remove(job_key);
    }
    return;
  }
  // No partial start: a job whose ranks cannot all start is not left
  // running on some of them.
  for (const auto& [id, pid] : started) {
    auto it = live_.find(pid);
    if (it != live_.end()) KillRankNow(it->second);
  }
}

void RankLauncher::KillRankNow(const LiveRank& rank) {
  if (rank.id.step() != 0) {
    // A step task: its process group; the job cgroup also holds the script.
    ::kill(-rank.pid, SIGKILL);
    return;
  }
  if (cgroups_) {
    cgroups_->Signal(JobDirName(rank.id), SIGKILL);
  } else {
    ::kill(-rank.pid, SIGKILL);
  }
}

absl::Status RankLauncher::StartOne(const v1::LaunchRanks& launch,
                                    const v1::RankLaunch& rank,
                                    const std::string& script_path,
                                    const RankIdentity& identity,
                                    const std::string& cgroup_procs_path,
                                    pid_t& pid_out) {
  // Everything the child needs is built before vfork (see rank_child.h).
  std::map<std::string, std::string> rank_environment(
      rank.environment().begin(), rank.environment().end());
  v1::RankId id;
  id.set_rank(rank.rank());
  id.set_step(launch.step());
  rank_environment[kProgressFileVariable] = absl::StrCat(
      work_dir_, "/jobs/", JobDirName(launch.job_id(), launch.attempt()), "/",
      ProgressFileName(id));
  std::vector<std::string> env_strings = SanitizedRankEnvironment(
      {launch.job_environment().begin(), launch.job_environment().end()},
      rank_environment, identity);
  // env_strings is not changed after this: the slot points into it.
  const TaskPidSlot task_pid = ReserveTaskPid(env_strings);
  std::vector<char*> envp = PointersTo(env_strings);
  // A batch script gets its arguments; a step's command is its own argv.
  std::vector<std::string> arg_strings;
  if (!launch.exec_command()) arg_strings.push_back(script_path);
  arg_strings.insert(arg_strings.end(), launch.script_args().begin(),
                     launch.script_args().end());
  std::vector<char*> argv = PointersTo(arg_strings);
  RankChildPlan plan;
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.task_pid = task_pid;
  std::vector<std::string> candidates;
  std::vector<char*> candidate_pointers;
  std::vector<char*> shell_argv;
  if (launch.exec_command()) {
    candidates = CommandCandidates(arg_strings.front(), env_strings);
    candidate_pointers = PointersTo(candidates);
    plan.exec_candidates = candidate_pointers.data();
    // /bin/sh, the candidate (set by the child), the command's arguments.
    shell_argv = {const_cast<char*>("/bin/sh"), nullptr};
    shell_argv.insert(shell_argv.end(), argv.begin() + 1, argv.end());
    plan.shell_argv = shell_argv.data();
  }
  plan.working_dir = launch.working_dir().c_str();
  plan.output_path = launch.output_path().c_str();
  plan.error_path =
      launch.error_path().empty() ? nullptr : launch.error_path().c_str();
  plan.truncate_output = launch.truncate_output();
  plan.cgroup_procs =
      cgroup_procs_path.empty() ? nullptr : cgroup_procs_path.c_str();
  plan.identity = &identity;
  // A step's output goes to the gantry run that waits for it.
  std::string out_header;
  std::string err_header;
  sockaddr_storage io_address{};
  if (!launch.io_address().empty()) {
    absl::StatusOr<socklen_t> length =
        ResolveStepIoAddress(launch.io_address(), io_address);
    if (!length.ok()) return length.status();
    out_header = absl::StrCat(launch.io_token(), " ", rank.rank(), " 1\n");
    err_header = absl::StrCat(launch.io_token(), " ", rank.rank(), " 2\n");
    plan.io_address = &io_address;
    plan.io_address_length = *length;
    plan.io_out_header = out_header.c_str();
    plan.io_err_header = err_header.c_str();
  }
  std::string in_header;
  if (rank.stdin_from_caller() && plan.io_address != nullptr) {
    in_header = absl::StrCat(launch.io_token(), " ", rank.rank(), " 0\n");
    plan.io_in_header = in_header.c_str();
  } else if (!rank.stdin_path().empty()) {
    plan.input_path = rank.stdin_path().c_str();
  }
  // srun --pty: task 0 of the step on a terminal whose master we relay.
  std::optional<OpenedPty> pty;
  if (launch.pty() && launch.step() != 0 && rank.rank() == 0 &&
      plan.io_address != nullptr) {
    absl::StatusOr<OpenedPty> opened =
        OpenStepPty(identity.switch_user ? identity.uid : ::getuid(),
                    identity.switch_user ? identity.gid : ::getgid());
    if (!opened.ok()) return opened.status();
    pty = *std::move(opened);
    plan.pty_slave = pty->slave_path.c_str();
  }

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    if (pty) ::close(pty->master_fd);
    return absl::ResourceExhaustedError(
        ErrnoText("pipe failed for", arg_strings.front()));
  }
  plan.report_fd = report[1];
  // vfork: the child borrows this process's memory until it execs (see
  // rank_child.h), and this thread waits until then. No signal may reach
  // the child before it has reset the handlers it inherited.
  sigset_t all_signals;
  sigset_t previous_mask;
  sigfillset(&all_signals);
  ::pthread_sigmask(SIG_SETMASK, &all_signals, &previous_mask);
  pid_t pid = ::vfork();
  if (pid == 0) ExecRankChild(plan);
  const int spawn_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  if (pid < 0) {
    if (pty) ::close(pty->master_fd);
    ::close(report[0]);
    ::close(report[1]);
    errno = spawn_errno;
    return absl::ResourceExhaustedError(
        ErrnoText("vfork failed for", arg_strings.front()));
  }
  ::close(report[1]);
  int message[2] = {0, 0};
  ssize_t got = 0;
  do {
    got = ::read(report[0], message, sizeof message);
  } while (got < 0 && errno == EINTR);
  ::close(report[0]);
  if (pty) {
    if (got == static_cast<ssize_t>(sizeof message)) {
      ::close(pty->master_fd);
    } else {
      StartPtyRelay(
          pty->master_fd, io_address, plan.io_address_length,
          absl::StrCat(launch.io_token(), " ", rank.rank(), " pty\n"));
    }
  }
  if (got == static_cast<ssize_t>(sizeof message)) {
    // The child said why it could not exec and exits at once: reaped here
    // (the reaper takes only the ranks in live_).
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return absl::FailedPreconditionError(DescribeRankChildFailure(
        static_cast<RankChildStep>(message[0]), message[1], plan));
  }
  pid_out = pid;
  return absl::OkStatus();
}

void RankLauncher::ReapLoop() {
  while (true) {
    {
      MutexLock lock(mutex_);
      changed_.Wait(lock, [this] {
        mutex_.AssertHeld();
        return stopping_ || !live_.empty();
      });
      if (live_.empty()) return;  // stopping, nothing left to reap
    }
    // Learn which child ended without reaping it: while it is unreaped its
    // pid cannot be reused, so its process group can be killed safely.
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) != 0 || info.si_pid <= 0) {
      if (errno != EINTR) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      continue;
    }
    bool ours;
    {
      MutexLock lock(mutex_);
      ours = live_.count(info.si_pid) > 0;
    }
    if (!ours) {
      // Another child of the agent (a pre-flight command, a dataset
      // helper): its owner reaps it and reads its status. Taking it here
      // would lose that status (and kill its process group).
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    // Whatever the rank left behind (background processes) ends with it,
    // as a Slurm step's processes do.
    ::kill(-info.si_pid, SIGKILL);
    int status = 0;
    pid_t pid = ::waitpid(info.si_pid, &status, 0);
    if (pid < 0) {
      if (errno != EINTR)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    LiveRank rank;
    bool last_of_attempt = true;
    {
      MutexLock lock(mutex_);
      auto it = live_.find(pid);
      if (it == live_.end()) continue;
      rank = std::move(it->second);
      live_.erase(it);
      exiting_.push_back(rank.id);
      for (const auto& [other_pid, other] : live_) {
        if (other.id.job_id() == rank.id.job_id() &&
            other.id.attempt() == rank.id.attempt()) {
          last_of_attempt = false;
        }
      }
    }
    RankOutcome outcome;
    outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    const std::string job_key = JobDirName(rank.id);
    // Read before the cgroup goes (it takes memory.events with it).
    if (cgroups_ && cgroups_->RankExitWasOutOfMemory(job_key, outcome.exit_code,
                                                     outcome.signal)) {
      outcome.out_of_memory = true;
      outcome.message =
          "the kernel's OOM killer stopped a process of the job, which "
          "used more memory than its cgroup allows (--mem)";
    }
    std::error_code error;
    if (last_of_attempt) {
      // Whatever escaped the ranks' process groups (daemons, setsid) ends
      // with the job's last rank on this node. Before the record goes: an
      // agent that dies in between finds the record and kills the cgroup.
      if (cgroups_) cgroups_->Remove(job_key);
      reclaimer_.Discard(absl::StrCat(work_dir_, "/jobs/", job_key));
    }
    fs::remove(rank.record_path, error);
    log::Info("rank exited", {{"job", rank.id.job_id()},
                              {"attempt", rank.id.attempt()},
                              {"rank", rank.id.rank()},
                              {"pid", pid},
                              {"exit_code", outcome.exit_code},
                              {"signal", outcome.signal},
                              {"out_of_memory", outcome.out_of_memory}});
    on_exit_(rank.id, outcome);
    {
      MutexLock lock(mutex_);
      std::erase_if(exiting_, [&](const v1::RankId& id) {
        return id.job_id() == rank.id.job_id() &&
               id.attempt() == rank.id.attempt() &&
               id.step() == rank.id.step() && id.rank() == rank.id.rank();
      });
    }
    // KillAllAndWait waits for the hand-over, not only the reaping.
    changed_.NotifyAll();
  }
}

void RankLauncher::EscalateLoop() {
  MutexLock lock(mutex_);
  while (!stopping_) {
    if (kill_deadlines_.empty()) {
      changed_.Wait(lock);
      continue;
    }
    const int64_t next = kill_deadlines_.begin()->first;
    const int64_t now = SteadyNowMs();
    if (now < next) {
      changed_.WaitFor(lock, std::chrono::milliseconds(next - now));
      continue;
    }
    pid_t pid = kill_deadlines_.begin()->second;
    kill_deadlines_.erase(kill_deadlines_.begin());
    auto live = live_.find(pid);
    if (live != live_.end()) {
      log::Warn("rank ignored SIGTERM; sending SIGKILL", {{"pid", pid}});
      KillRankNow(live->second);
    }
  }
}

void RankLauncher::Kill(uint64_t job_id, uint32_t attempt, int signal,
                        uint32_t grace_seconds, bool escalate, uint32_t step) {
  {
    MutexLock lock(mutex_);
    const int64_t deadline = SteadyNowMs() + int64_t{grace_seconds} * 1000;
    const int first_signal = signal > 0 ? signal : SIGTERM;
    std::set<std::string> job_keys;
    for (const auto& [pid, rank] : live_) {
      if (rank.id.job_id() != job_id) continue;
      if (attempt != 0 && rank.id.attempt() != attempt) continue;
      if (step != 0) {
        // One step: its tasks' process groups (the job cgroup also holds
        // the script and other steps).
        if (rank.id.step() != step) continue;
        ::kill(-pid, first_signal);
        if (escalate && first_signal != SIGKILL) {
          kill_deadlines_.emplace(deadline, pid);
        }
        continue;
      }
      job_keys.insert(JobDirName(rank.id));
      // Without cgroups, the whole process group: the script and what it
      // started (except what left the group).
      if (!cgroups_) ::kill(-pid, first_signal);
      if (escalate && first_signal != SIGKILL) {
        kill_deadlines_.emplace(deadline, pid);
      }
    }
    // With them, every process of the job once, however it daemonised.
    for (const std::string& key : job_keys) {
      if (cgroups_) cgroups_->Signal(key, first_signal);
    }
  }
  changed_.NotifyAll();
}

void RankLauncher::SignalPart(uint64_t job_id, uint32_t attempt, int signal,
                              bool batch_script) {
  MutexLock lock(mutex_);
  for (const auto& [pid, rank] : live_) {
    if (rank.id.job_id() != job_id) continue;
    if (attempt != 0 && rank.id.attempt() != attempt) continue;
    const bool is_script = rank.id.step() == 0;
    if (is_script != batch_script) continue;
    ::kill(batch_script ? pid : -pid, signal);
  }
}

void RankLauncher::KillAllAndWait(uint32_t grace_seconds) {
  std::vector<uint64_t> jobs;
  {
    MutexLock lock(mutex_);
    for (const auto& [pid, rank] : live_) jobs.push_back(rank.id.job_id());
  }
  for (uint64_t job : jobs) Kill(job, 0, SIGTERM, grace_seconds);
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::seconds(grace_seconds + 2);
  MutexLock lock(mutex_);
  while ((!live_.empty() || !exiting_.empty()) &&
         std::chrono::steady_clock::now() < give_up) {
    changed_.WaitFor(lock, std::chrono::milliseconds(50));
  }
}

std::vector<v1::JobUsageSample> RankLauncher::MeasureUsage(
    int64_t now_ms) const {
  std::map<std::pair<uint64_t, uint32_t>, std::vector<pid_t>> jobs;
  {
    MutexLock lock(mutex_);
    for (const auto& [pid, rank] : live_) {
      jobs[{rank.id.job_id(), rank.id.attempt()}].push_back(pid);
    }
  }
  // The files are read outside the lock: ranks may start and end meanwhile.
  std::vector<v1::JobUsageSample> samples;
  for (const auto& [job, pids] : jobs) {
    const std::string key = JobDirName(job.first, job.second);
    const JobUsageReading reading =
        ReadJobUsage(cgroups_ ? cgroups_->Directory(key) : "", pids);
    v1::JobUsageSample& sample = samples.emplace_back();
    sample.set_job_id(job.first);
    sample.set_attempt(job.second);
    sample.set_node(node_name_);
    sample.set_time_ms(now_ms);
    sample.set_cpu_usec(reading.cpu_usec);
    sample.set_rss_bytes(reading.rss_bytes);
    sample.set_max_rss_bytes(reading.max_rss_bytes);
    sample.set_tasks(static_cast<uint32_t>(pids.size()));
    sample.set_source(reading.source);
  }
  return samples;
}

std::vector<v1::RankProgressReport> RankLauncher::ReadProgress() const {
  std::map<std::pair<uint64_t, uint32_t>, std::vector<v1::RankId>> jobs;
  {
    MutexLock lock(mutex_);
    for (const auto& [pid, rank] : live_) {
      jobs[{rank.id.job_id(), rank.id.attempt()}].push_back(rank.id);
    }
  }
  // The files are read outside the lock, as in MeasureUsage.
  std::vector<v1::RankProgressReport> reports;
  for (const auto& [job, ranks] : jobs) {
    const std::string job_dir =
        absl::StrCat(work_dir_, "/jobs/", JobDirName(job.first, job.second));
    std::vector<std::pair<uint32_t, RankStep>> steps;
    for (const v1::RankId& rank : ranks) {
      if (std::optional<RankStep> step =
              ReadProgressFile(job_dir + "/" + ProgressFileName(rank))) {
        steps.emplace_back(rank.rank(), *step);
      }
    }
    std::optional<v1::NodeProgress> summary = SummarizeRanks(steps);
    if (!summary) continue;
    v1::RankProgressReport& report = reports.emplace_back();
    report.set_job_id(job.first);
    report.set_attempt(job.second);
    *report.mutable_progress() = *std::move(summary);
  }
  return reports;
}

std::vector<KillNoticeTarget> RankLauncher::TakeKillNoticeTargets(
    uint64_t job_id, uint32_t attempt, uint32_t step) {
  MutexLock lock(mutex_);
  std::vector<KillNoticeTarget> targets;
  for (auto& [pid, rank] : live_) {
    if (!rank.notice || rank.id.job_id() != job_id) continue;
    if (attempt != 0 && rank.id.attempt() != attempt) continue;
    if (step != 0 && rank.id.step() != step) continue;
    targets.push_back(*std::move(rank.notice));
    rank.notice.reset();
  }
  return targets;
}

std::vector<v1::RankId> RankLauncher::Running() const {
  MutexLock lock(mutex_);
  std::vector<v1::RankId> ranks;
  for (const auto& [pid, rank] : live_) ranks.push_back(rank.id);
  ranks.insert(ranks.end(), exiting_.begin(), exiting_.end());
  return ranks;
}

}  // namespace gantry::agent
