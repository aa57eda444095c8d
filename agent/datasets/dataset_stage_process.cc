#include "agent/datasets/dataset_stage_process.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/system/spawn_signals.h"

extern char** environ;

namespace gantry::agent {
namespace {

void Say(const std::string& line) {
  std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n =
        write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

int SayError(const absl::Status& status) {
  std::string message(status.message());
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  Say(absl::StrCat("error ", static_cast<int>(status.code()), " ", message));
  return 1;
}

// Becomes the user for good; any failure ends the helper.
absl::Status SwitchToUser(uid_t uid, gid_t gid,
                          const std::vector<gid_t>& groups) {
  if (setgroups(groups.size(), groups.data()) != 0 ||
      setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot become uid ", uid, ": ", std::strerror(errno)));
  }
  uid_t r = 0, e = 0, s = 0;
  if (getresuid(&r, &e, &s) != 0 || r != uid || e != uid || s != uid) {
    return absl::InternalError(absl::StrCat("cannot become uid ", uid));
  }
  return absl::OkStatus();
}

// How a version is computed, as one word of the helper's command line.
const char* VersionByWord(DatasetVersionBy version_by) {
  return version_by == DatasetVersionBy::kContent ? "content" : "metadata";
}
DatasetVersionBy VersionByWord(const std::string& word) {
  return word == "content" ? DatasetVersionBy::kContent
                           : DatasetVersionBy::kMetadata;
}

int Operate(const std::vector<std::string>& op) {
  if (op.size() == 3 && op[0] == "scan") {
    absl::StatusOr<DatasetManifest> manifest =
        ScanDatasetTree(op[1], VersionByWord(op[2]));
    if (!manifest.ok()) return SayError(manifest.status());
    Say(absl::StrCat("manifest ", manifest->version, " ", manifest->total_bytes,
                     " ", manifest->file_count));
    return 0;
  }
  if (op.size() == 6 && op[0] == "copy") {
    InProcessDatasetWorker worker;
    uint64_t last_reported = 0;
    // "-": no earlier version to take unchanged files from.
    const std::string earlier = op[5] == "-" ? std::string() : op[5];
    absl::StatusOr<CopyResult> copied = worker.Copy(
        {}, op[1], op[2], VersionByWord(op[3]), op[4], earlier,
        [&](uint64_t done, uint64_t total) {
          // A line per 64 MiB at most, and the last one.
          if (done == total || done - last_reported >= (64u << 20)) {
            last_reported = done;
            Say(absl::StrCat("progress ", done, " ", total));
          }
        });
    if (!copied.ok() && !absl::IsAlreadyExists(copied.status())) {
      return SayError(copied.status());
    }
    Say(absl::StrCat("copied ", copied.ok() ? copied->bytes_copied : 0, " ",
                     copied.ok() ? copied->bytes_resumed : 0, " ",
                     copied.ok() ? copied->bytes_reused : 0));
    return 0;
  }
  if (op.size() == 2 && op[0] == "remove") {
    std::error_code error;
    std::filesystem::remove_all(op[1], error);
    if (error) {
      return SayError(absl::InternalError(absl::StrCat(
          "local cache: cannot remove ", op[1], ": ", error.message())));
    }
    Say("removed");
    return 0;
  }
  return SayError(absl::InvalidArgumentError("unknown dataset operation"));
}

}  // namespace

int RunDatasetWorker(const std::vector<std::string>& all_args) {
  // The first word is the agent's pid; the rest is who to become and what
  // to do.
  pid_t parent = 0;
  if (all_args.empty() || !absl::SimpleAtoi(all_args[0], &parent)) {
    return SayError(absl::InvalidArgumentError("bad dataset worker arguments"));
  }
  const std::vector<std::string> args(all_args.begin() + 1, all_args.end());
  uint32_t uid = 0, gid = 0;
  if (args.size() < 5 || !absl::SimpleAtoi(args[0], &uid) ||
      !absl::SimpleAtoi(args[1], &gid)) {
    return SayError(absl::InvalidArgumentError("bad dataset worker arguments"));
  }
  std::vector<gid_t> groups;
  if (args[2] != "-") {
    for (absl::string_view text : absl::StrSplit(args[2], ',')) {
      uint32_t group = 0;
      if (!absl::SimpleAtoi(text, &group)) {
        return SayError(absl::InvalidArgumentError("bad group list"));
      }
      groups.push_back(group);
    }
  }
  if (args[3] == "1") {
    if (absl::Status status = SwitchToUser(uid, gid, groups); !status.ok()) {
      return SayError(status);
    }
  }
  // Die with the agent: a restarted agent resumes an interrupted copy in
  // the same ENTRY.partial, and a helper of the dead one must not write
  // there beside it. Armed only now: a change of credentials clears it.
  // Checked after arming, in case the agent died before.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
    return SayError(absl::UnavailableError("the agent is gone"));
  }
  umask(077);
  return Operate(std::vector<std::string>(args.begin() + 4, args.end()));
}

UserProcessDatasetWorker::UserProcessDatasetWorker(std::string binary)
    : binary_(std::move(binary)) {}

absl::StatusOr<std::vector<std::string>> UserProcessDatasetWorker::Run(
    const DatasetUser& user, const std::vector<std::string>& operation,
    const StageProgress& progress) {
  std::vector<std::string> words = {
      binary_, kDatasetWorkerFlag, absl::StrCat(getpid()),
      absl::StrCat(user.uid), absl::StrCat(user.gid)};
  words.push_back(user.groups.empty() ? "-" : absl::StrJoin(user.groups, ","));
  words.push_back(user.switch_user ? "1" : "0");
  words.insert(words.end(), operation.begin(), operation.end());
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  ResetSignalsOnSpawn(attributes);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, binary_.c_str(), &actions, &attributes,
                                  argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    return absl::InternalError(absl::StrCat(
        "local cache: cannot start ", binary_, ": ", std::strerror(spawned)));
  }
  std::string pending, last;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(out[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buffer, static_cast<size_t>(n));
    size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      std::string line = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      std::vector<std::string> parts = absl::StrSplit(line, ' ');
      uint64_t done = 0, total = 0;
      if (parts.size() == 3 && parts[0] == "progress" &&
          absl::SimpleAtoi(parts[1], &done) &&
          absl::SimpleAtoi(parts[2], &total)) {
        if (progress) progress(done, total);
      } else {
        last = std::move(line);
      }
    }
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (last.rfind("error ", 0) == 0) {
    std::vector<std::string> parts =
        absl::StrSplit(last, absl::MaxSplits(' ', 2));
    int code = 0;
    if (parts.size() == 3 && absl::SimpleAtoi(parts[1], &code)) {
      return absl::Status(static_cast<absl::StatusCode>(code), parts[2]);
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || last.empty()) {
    // Killed (a crash point, the OOM killer) or garbled: a copy left
    // behind is resumed by the next stage.
    return absl::UnavailableError(absl::StrCat(
        "the dataset worker ended before it finished (status ", status, ")"));
  }
  return std::vector<std::string>(absl::StrSplit(last, ' '));
}

absl::StatusOr<DatasetManifest> UserProcessDatasetWorker::Scan(
    const DatasetUser& user, const std::string& source,
    DatasetVersionBy version_by) {
  absl::StatusOr<std::vector<std::string>> reply =
      Run(user, {"scan", source, VersionByWord(version_by)}, {});
  if (!reply.ok()) return reply.status();
  DatasetManifest manifest;
  if (reply->size() != 4 || (*reply)[0] != "manifest" ||
      !absl::SimpleAtoi((*reply)[2], &manifest.total_bytes) ||
      !absl::SimpleAtoi((*reply)[3], &manifest.file_count)) {
    return absl::InternalError("the dataset worker's answer is garbled");
  }
  manifest.version = (*reply)[1];
  return manifest;
}

absl::StatusOr<CopyResult> UserProcessDatasetWorker::Copy(
    const DatasetUser& user, const std::string& source,
    const std::string& version, DatasetVersionBy version_by,
    const std::string& entry, const std::string& earlier_entry,
    const StageProgress& progress) {
  absl::StatusOr<std::vector<std::string>> reply =
      Run(user,
          {"copy", source, version, VersionByWord(version_by), entry,
           earlier_entry.empty() ? std::string("-") : earlier_entry},
          progress);
  if (!reply.ok()) return reply.status();
  CopyResult result;
  if (reply->size() != 4 || (*reply)[0] != "copied" ||
      !absl::SimpleAtoi((*reply)[1], &result.bytes_copied) ||
      !absl::SimpleAtoi((*reply)[2], &result.bytes_resumed) ||
      !absl::SimpleAtoi((*reply)[3], &result.bytes_reused)) {
    return absl::InternalError("the dataset worker's answer is garbled");
  }
  return result;
}

absl::Status UserProcessDatasetWorker::Remove(const DatasetUser& user,
                                              const std::string& path) {
  absl::StatusOr<std::vector<std::string>> reply =
      Run(user, {"remove", path}, {});
  return reply.ok() ? absl::OkStatus() : reply.status();
}

}  // namespace gantry::agent
