#include "agent/rank_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

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

// Field 22 of /proc/PID/stat: start time in clock ticks since boot. Together
// with the pid it names one process, even after the pid is reused.
std::string ProcessStartTime(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(in, line)) return "";
  size_t close = line.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  // Fields after the command start at field 3 (state); start time is 22.
  for (int index = 3; index <= 22 && fields >> field; ++index) {
    if (index == 22) return field;
  }
  return "";
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
  int killed = 0;
  std::error_code error;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(work_dir_ + "/ranks", error)) {
    std::ifstream in(entry.path());
    pid_t pid = 0;
    std::string start_time;
    if (in >> pid >> start_time && pid > 1 &&
        ProcessStartTime(pid) == start_time) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ++killed;
      log::Warn("killed a rank left by an earlier agent process",
                {{"record", entry.path().filename().string()}, {"pid", pid}});
    }
    fs::remove(entry.path(), error);
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

absl::Status RankLauncher::StartOne(const v1::LaunchRanks& launch,
                                    const v1::RankLaunch& rank,
                                    const std::string& script_path,
                                    pid_t& pid_out) {
  struct stat dir_info {};
  if (::stat(launch.working_dir().c_str(), &dir_info) != 0 ||
      !S_ISDIR(dir_info.st_mode)) {
    return absl::FailedPreconditionError(
        ErrnoText("cannot use working directory", launch.working_dir()));
  }
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  int out_fd = ::open(launch.output_path().c_str(), flags, 0644);
  if (out_fd < 0) {
    return absl::FailedPreconditionError(
        ErrnoText("cannot open output file", launch.output_path()));
  }
  int err_fd = out_fd;
  if (!launch.error_path().empty()) {
    err_fd = ::open(launch.error_path().c_str(), flags, 0644);
    if (err_fd < 0) {
      ::close(out_fd);
      return absl::FailedPreconditionError(
          ErrnoText("cannot open error file", launch.error_path()));
    }
  }
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
  for (const std::string& arg : launch.script_args())
    arg_strings.push_back(arg);
  std::vector<char*> argv;
  for (std::string& s : arg_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const char* working_dir = launch.working_dir().c_str();
  const char* exec_failed = "gantry: cannot execute the batch script\n";

  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out_fd);
    if (err_fd != out_fd) ::close(err_fd);
    return absl::ResourceExhaustedError(
        ErrnoText("fork failed for", script_path));
  }
  if (pid == 0) {
    ::setsid();
    // A rank dies with its agent (kill -9 included): the agent is the only
    // one who could report it, so it must not run on unwatched. Processes
    // the rank started are killed when the agent restarts (see
    // CleanUpLeftovers).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    sigset_t all;
    sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (::chdir(working_dir) != 0) ::_exit(126);
    ::execve(argv[0], argv.data(), envp.data());
    ssize_t ignored = ::write(2, exec_failed, std::strlen(exec_failed));
    (void)ignored;
    ::_exit(127);
  }
  ::close(out_fd);
  if (err_fd != out_fd) ::close(err_fd);
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
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
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
