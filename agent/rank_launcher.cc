#include "agent/rank_launcher.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"

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

std::string JobDirName(uint64_t job_id, uint32_t attempt) {
  return absl::StrCat(job_id, ".", attempt);
}

std::string ErrnoText(const std::string& what, const std::string& path) {
  return absl::StrCat(what, " ", path, ": ", std::strerror(errno));
}

}  // namespace

RankLauncher::RankLauncher(std::string work_dir, StartCallback on_start,
                           ExitCallback on_exit)
    : work_dir_(std::move(work_dir)),
      on_start_(std::move(on_start)),
      on_exit_(std::move(on_exit)) {
  std::error_code error;
  fs::create_directories(work_dir_ + "/ranks", error);
  fs::create_directories(work_dir_ + "/jobs", error);
  reaper_ = std::thread([this] { ReapLoop(); });
  escalator_ = std::thread([this] { EscalateLoop(); });
}

RankLauncher::~RankLauncher() {
  KillAllAndWait(5);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
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
  std::error_code error;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(work_dir_ + "/ranks", error)) {
    std::ifstream in(entry.path());
    pid_t pid = 0;
    uint64_t start_time = 0;
    if (in >> pid >> start_time && pid > 1) groups.push_back({pid, start_time});
    fs::remove(entry.path(), error);
  }
  int killed = 0;
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
    fs::remove_all(entry.path(), error);
  }
  return killed;
}

void RankLauncher::Launch(const v1::LaunchRanks& launch) {
  const std::string job_dir = absl::StrCat(
      work_dir_, "/jobs/", JobDirName(launch.job_id(), launch.attempt()));
  const std::string script_path = job_dir + "/script";
  std::string setup_error;
  {
    std::error_code error;
    fs::create_directories(job_dir, error);
    std::ofstream out(script_path, std::ios::binary | std::ios::trunc);
    out << launch.script();
    out.close();
    if (error || !out) {
      setup_error = absl::StrCat("cannot write the script to ", script_path);
    } else if (::geteuid() == 0) {
      // The job's user runs it, and no other user may read it.
      ::chmod(script_path.c_str(), 0700);
      if (::chown(script_path.c_str(), launch.uid(), launch.gid()) != 0 ||
          ::chown(job_dir.c_str(), launch.uid(), launch.gid()) != 0) {
        setup_error = ErrnoText("cannot hand the script to its user:", job_dir);
      }
      ::chmod(job_dir.c_str(), 0700);
    } else {
      ::chmod(script_path.c_str(), 0755);
    }
  }
  std::vector<std::pair<v1::RankId, pid_t>> started;
  std::vector<std::pair<v1::RankId, std::string>> failed;
  {
    std::lock_guard lock(mutex_);
    for (const v1::RankLaunch& rank : launch.ranks()) {
      v1::RankId id;
      id.set_job_id(launch.job_id());
      id.set_attempt(launch.attempt());
      id.set_rank(rank.rank());
      if (!setup_error.empty()) {
        failed.push_back({id, setup_error});
        continue;
      }
      pid_t pid = 0;
      absl::Status status = StartOne(launch, rank, script_path, pid);
      if (!status.ok()) {
        failed.push_back({id, std::string(status.message())});
        continue;
      }
      LiveRank live{id, pid,
                    absl::StrCat(work_dir_, "/ranks/", launch.job_id(), ".",
                                 launch.attempt(), ".", rank.rank())};
      std::ofstream record(live.record_path, std::ios::trunc);
      record << pid << " " << ProcessStartTime(pid) << "\n";
      live_.emplace(pid, std::move(live));
      started.push_back({id, pid});
    }
  }
  changed_.notify_all();
  for (const auto& [id, pid] : started) {
    log::Info("rank started", {{"job", id.job_id()},
                               {"attempt", id.attempt()},
                               {"rank", id.rank()},
                               {"pid", pid}});
    on_start_(id, pid);
  }
  for (const auto& [id, message] : failed) {
    log::Warn("rank could not start",
              {{"job", id.job_id()}, {"rank", id.rank()}, {"error", message}});
    on_exit_(id, 127, 0, true, message);
  }
}

namespace {

// What a rank runs as. Looked up before fork: getpwuid and getgrouplist
// are not async-signal-safe.
struct RankIdentity {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

absl::StatusOr<RankIdentity> LookUpIdentity(uint32_t uid, uint32_t gid) {
  RankIdentity identity;
  if (::geteuid() != 0) {
    // A non-root agent (a developer's) can only run ranks as itself.
    return identity;
  }
  identity.switch_user = true;
  identity.uid = uid;
  identity.gid = gid;
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 ||
      found == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("user id ", uid, " is not known on this node"));
  }
  int count = 64;
  identity.groups.resize(count);
  if (::getgrouplist(entry.pw_name, gid, identity.groups.data(), &count) < 0) {
    identity.groups.resize(count);
    ::getgrouplist(entry.pw_name, gid, identity.groups.data(), &count);
  }
  identity.groups.resize(count);
  return identity;
}

// The step of the child's setup that failed, sent to the parent over a
// close-on-exec pipe with the errno; nothing arrives when exec succeeds.
enum class ChildStep : int {
  kIdentity = 1,
  kWorkingDir,
  kOutput,
  kError,
  kExec,
};

std::string DescribeChildFailure(ChildStep step, int error,
                                 const v1::LaunchRanks& launch,
                                 const std::string& script_path) {
  const char* reason = std::strerror(error);
  switch (step) {
    case ChildStep::kIdentity:
      return absl::StrCat("cannot switch to user ", launch.uid(), ": ", reason);
    case ChildStep::kWorkingDir:
      return absl::StrCat("cannot use working directory ", launch.working_dir(),
                          ": ", reason);
    case ChildStep::kOutput:
      return absl::StrCat("cannot open output file ", launch.output_path(),
                          ": ", reason);
    case ChildStep::kError:
      return absl::StrCat("cannot open error file ", launch.error_path(), ": ",
                          reason);
    case ChildStep::kExec:
      return absl::StrCat("cannot execute ", script_path, ": ", reason);
  }
  return reason;
}

}  // namespace

absl::Status RankLauncher::StartOne(const v1::LaunchRanks& launch,
                                    const v1::RankLaunch& rank,
                                    const std::string& script_path,
                                    pid_t& pid_out) {
  absl::StatusOr<RankIdentity> identity =
      LookUpIdentity(launch.uid(), launch.gid());
  if (!identity.ok()) return identity.status();
  // Everything the child needs is built before fork: after fork, in a
  // threaded process, only async-signal-safe calls are allowed.
  std::map<std::string, std::string> environment(
      launch.job_environment().begin(), launch.job_environment().end());
  for (const auto& [key, value] : rank.environment()) environment[key] = value;
  std::vector<std::string> env_strings;
  for (const auto& [key, value] : environment) {
    env_strings.push_back(key + "=" + value);
  }
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_strings = {script_path};
  for (const std::string& arg : launch.script_args()) {
    arg_strings.push_back(arg);
  }
  std::vector<char*> argv;
  for (std::string& s : arg_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const char* working_dir = launch.working_dir().c_str();
  const char* output_path = launch.output_path().c_str();
  const char* error_path =
      launch.error_path().empty() ? nullptr : launch.error_path().c_str();
  const int open_flags = O_WRONLY | O_CREAT | O_APPEND;

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    return absl::ResourceExhaustedError(
        ErrnoText("pipe failed for", script_path));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(report[0]);
    ::close(report[1]);
    return absl::ResourceExhaustedError(
        ErrnoText("fork failed for", script_path));
  }
  if (pid == 0) {
    auto fail = [&](ChildStep step) {
      int message[2] = {static_cast<int>(step), errno};
      if (step == ChildStep::kExec) {
        // The output file is open by now: say it there too.
        const char* text =
            "gantry: cannot execute the batch script (gantry job ID says "
            "why)\n";
        ssize_t ignored = ::write(2, text, std::strlen(text));
        (void)ignored;
      }
      ssize_t ignored = ::write(report[1], message, sizeof message);
      (void)ignored;
      ::_exit(127);
    };
    ::setsid();
    // A rank dies with its agent (kill -9 included): the agent is the only
    // one who could report it, so it must not run on unwatched. Processes
    // the rank started are killed when the agent restarts (see
    // CleanUpLeftovers).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Drop to the job's user before touching any path, so the user's
    // permissions, not root's, decide what the job may open.
    if (identity->switch_user &&
        (::setgroups(identity->groups.size(), identity->groups.data()) != 0 ||
         ::setgid(identity->gid) != 0 || ::setuid(identity->uid) != 0)) {
      fail(ChildStep::kIdentity);
    }
    if (::chdir(working_dir) != 0) fail(ChildStep::kWorkingDir);
    int out_fd = ::open(output_path, open_flags, 0644);
    if (out_fd < 0) fail(ChildStep::kOutput);
    int err_fd = out_fd;
    if (error_path != nullptr) {
      err_fd = ::open(error_path, open_flags, 0644);
      if (err_fd < 0) fail(ChildStep::kError);
    }
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    // Keep the report pipe (close-on-exec) open until exec.
    for (int fd = 3; fd < report[1]; ++fd) ::close(fd);
    ::syscall(SYS_close_range, static_cast<unsigned>(report[1]) + 1, ~0U, 0U);
    sigset_t all;
    sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::execve(argv[0], argv.data(), envp.data());
    fail(ChildStep::kExec);
  }
  ::close(report[1]);
  int message[2] = {0, 0};
  ssize_t got = 0;
  do {
    got = ::read(report[0], message, sizeof message);
  } while (got < 0 && errno == EINTR);
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof message)) {
    // The reaper collects the child; it is not in live_, so it reports
    // nothing more.
    return absl::FailedPreconditionError(DescribeChildFailure(
        static_cast<ChildStep>(message[0]), message[1], launch, script_path));
  }
  pid_out = pid;
  return absl::OkStatus();
}

void RankLauncher::ReapLoop() {
  while (true) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || !live_.empty(); });
      if (live_.empty()) return;  // stopping, nothing left to reap
    }
    // Learn which child ended without reaping it: while it is unreaped its
    // pid cannot be reused, so its process group can be killed safely.
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) == 0 && info.si_pid > 0) {
      // Whatever the rank left behind (background processes) ends with it,
      // as a Slurm step's processes do.
      ::kill(-info.si_pid, SIGKILL);
    }
    int status = 0;
    pid_t pid = ::waitpid(info.si_pid > 0 ? info.si_pid : -1, &status, 0);
    if (pid < 0) {
      if (errno != EINTR)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    LiveRank rank;
    bool last_of_attempt = true;
    {
      std::lock_guard lock(mutex_);
      auto it = live_.find(pid);
      if (it == live_.end()) continue;
      rank = std::move(it->second);
      live_.erase(it);
      for (const auto& [other_pid, other] : live_) {
        if (other.id.job_id() == rank.id.job_id() &&
            other.id.attempt() == rank.id.attempt()) {
          last_of_attempt = false;
        }
      }
    }
    std::error_code error;
    fs::remove(rank.record_path, error);
    if (last_of_attempt) {
      fs::remove_all(
          absl::StrCat(work_dir_, "/jobs/",
                       JobDirName(rank.id.job_id(), rank.id.attempt())),
          error);
    }
    int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    int signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    log::Info("rank exited", {{"job", rank.id.job_id()},
                              {"attempt", rank.id.attempt()},
                              {"rank", rank.id.rank()},
                              {"pid", pid},
                              {"exit_code", exit_code},
                              {"signal", signal}});
    on_exit_(rank.id, exit_code, signal, false, "");
  }
}

void RankLauncher::EscalateLoop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (kill_deadlines_.empty()) {
      changed_.wait(lock);
      continue;
    }
    const int64_t next = kill_deadlines_.begin()->first;
    const int64_t now = SteadyNowMs();
    if (now < next) {
      changed_.wait_for(lock, std::chrono::milliseconds(next - now));
      continue;
    }
    pid_t pid = kill_deadlines_.begin()->second;
    kill_deadlines_.erase(kill_deadlines_.begin());
    if (live_.count(pid)) {
      log::Warn("rank ignored SIGTERM; sending SIGKILL", {{"pid", pid}});
      ::kill(-pid, SIGKILL);
    }
  }
}

void RankLauncher::Kill(uint64_t job_id, uint32_t attempt, int signal,
                        uint32_t grace_seconds) {
  {
    std::lock_guard lock(mutex_);
    const int64_t deadline = SteadyNowMs() + int64_t{grace_seconds} * 1000;
    for (const auto& [pid, rank] : live_) {
      if (rank.id.job_id() != job_id) continue;
      if (attempt != 0 && rank.id.attempt() != attempt) continue;
      // The whole process group: the script and everything it started.
      ::kill(-pid, signal > 0 ? signal : SIGTERM);
      if (signal != SIGKILL) kill_deadlines_.emplace(deadline, pid);
    }
  }
  changed_.notify_all();
}

void RankLauncher::KillAllAndWait(uint32_t grace_seconds) {
  std::vector<uint64_t> jobs;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [pid, rank] : live_) jobs.push_back(rank.id.job_id());
  }
  for (uint64_t job : jobs) Kill(job, 0, SIGTERM, grace_seconds);
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::seconds(grace_seconds + 2);
  std::unique_lock lock(mutex_);
  while (!live_.empty() && std::chrono::steady_clock::now() < give_up) {
    changed_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

std::vector<v1::RankId> RankLauncher::Running() const {
  std::lock_guard lock(mutex_);
  std::vector<v1::RankId> ranks;
  for (const auto& [pid, rank] : live_) ranks.push_back(rank.id);
  return ranks;
}

}  // namespace gantry::agent
