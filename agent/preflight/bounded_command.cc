#include "agent/preflight/bounded_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/system/spawn_signals.h"

extern char** environ;

namespace gantry::agent {
namespace {

constexpr size_t kOutputKept = 64 * 1024;
constexpr int kPollMs = 50;

}  // namespace

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    environment[text.substr(0, equals)] = text.substr(equals + 1);
  }
  return environment;
}

absl::StatusOr<BoundedCommandResult> RunBoundedCommand(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& environment,
    std::chrono::steady_clock::time_point deadline,
    const std::atomic<bool>& cancelled) {
  if (argv.empty()) return absl::InternalError("no command");
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<std::string> environment_text;
  for (const auto& [key, value] : environment) {
    environment_text.push_back(absl::StrCat(key, "=", value));
  }
  std::vector<char*> args, envp;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  for (std::string& entry : environment_text) envp.push_back(entry.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  ResetSignalsOnSpawn(attributes);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, &attributes,
                                  args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    return absl::InternalError(
        absl::StrCat("cannot run ", argv[0], ": ", std::strerror(spawned)));
  }
  BoundedCommandResult result;
  bool open = true;
  bool reaped = false;
  char buffer[4096];
  int status = 0;
  for (;;) {
    if (open) {
      pollfd entry{.fd = out[0], .events = POLLIN, .revents = 0};
      if (poll(&entry, 1, kPollMs) > 0) {
        const ssize_t got = read(out[0], buffer, sizeof(buffer));
        if (got > 0) {
          result.output.append(buffer, static_cast<size_t>(got));
          if (result.output.size() > 2 * kOutputKept) {
            result.output.erase(0, result.output.size() - kOutputKept);
          }
        } else if (got == 0 || errno != EINTR) {
          open = false;
        }
      }
    }
    if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      // What it printed last is still in the pipe; something it left
      // running may hold the pipe open, so read only a little longer.
      deadline = std::min(deadline, std::chrono::steady_clock::now() +
                                        std::chrono::milliseconds(200));
    }
    if (reaped && !open) break;
    if (std::chrono::steady_clock::now() >= deadline || cancelled.load()) {
      if (!reaped) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        result.timed_out = true;
      }
      break;
    }
    if (!open) usleep(kPollMs * 1000);
  }
  // Whatever the command left behind in its group goes with it.
  kill(-pid, SIGKILL);
  close(out[0]);
  if (result.output.size() > kOutputKept) {
    result.output.erase(0, result.output.size() - kOutputKept);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace gantry::agent
