#include "cli/commands/attach_command.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/client/controller_client.h"
#include "cli/version.h"
#include "common/edit_distance.h"
#include "common/ids.h"
#include "common/step_io_address.h"
#include "common/write_all.h"

namespace gantry::cli {
namespace {

constexpr char kAttachUsage[] =
    R"(Usage: gantry attach [OPTIONS] JOBID.STEPID     (also: sattach)

Print the output of a running step of yours (srun / gantry run inside a
job, or srun outside one) from another terminal, as its tasks write it,
until the step ends. Ctrl-C detaches; the step goes on.

Options:
  -l, --label       put "TASK: " before each line
      --output-filter=TASK   stdout of this task only
      --error-filter=TASK    stderr of this task only
  -Q, --quiet       no informational messages
  -h, --help        print this help
  -V, --version     print Gantry's version
)";

constexpr const char* kLongOptions[] = {
    "label", "quiet", "help", "version", "output-filter", "error-filter"};
// sattach's options for what Gantry's attach cannot do: named, not
// "unrecognized".
constexpr const char* kUnsupported[] = {"input-filter", "pty", "layout"};
constexpr size_t kMaxFrameBytes = 1 << 20;

std::string UnrecognizedAttachOption(const std::string& word,
                                     const std::string& program) {
  const std::string name = word.substr(word.find_first_not_of('-'));
  std::string message = absl::StrCat("unrecognized option '", word, "'");
  for (const char* option : kLongOptions) {
    if (EditDistance(name, option, 2) <= 2) {
      absl::StrAppend(&message, " (did you mean --", option, "?)");
      break;
    }
  }
  absl::StrAppend(&message, "; try \"", program, " --help\"");
  return message;
}

// The output frames ("TASK STREAM LENGTH\n" + bytes) to our stdout and
// stderr, labelled by task with --label.
class FramePrinter {
 public:
  FramePrinter(bool label, std::optional<uint32_t> out_task,
               std::optional<uint32_t> err_task)
      : label_(label), out_task_(out_task), err_task_(err_task) {}

  // False when the stream is malformed.
  bool Feed(std::string_view bytes) {
    pending_.append(bytes.data(), bytes.size());
    while (true) {
      const size_t newline = pending_.find('\n');
      if (newline == std::string::npos) return pending_.size() < 64;
      std::vector<std::string> words =
          absl::StrSplit(pending_.substr(0, newline), ' ');
      uint32_t task = 0;
      int stream = 0;
      size_t length = 0;
      if (words.size() != 3 || !absl::SimpleAtoi(words[0], &task) ||
          !absl::SimpleAtoi(words[1], &stream) ||
          !absl::SimpleAtoi(words[2], &length) || length > kMaxFrameBytes ||
          (stream != 1 && stream != 2)) {
        return false;
      }
      if (pending_.size() < newline + 1 + length) return true;
      Print(task, stream, pending_.substr(newline + 1, length));
      pending_.erase(0, newline + 1 + length);
    }
  }

 private:
  void Print(uint32_t task, int stream, const std::string& data) {
    const std::optional<uint32_t>& only = stream == 1 ? out_task_ : err_task_;
    if (only && *only != task) return;
    if (!label_) {
      WriteAll(stream, data.data(), data.size());
      return;
    }
    // Whether the task's stream is at the start of a line.
    auto [at, inserted] = line_start_.try_emplace({task, stream}, true);
    bool& at_line_start = at->second;
    std::string out;
    for (char c : data) {
      if (at_line_start) absl::StrAppend(&out, task, ": ");
      out += c;
      at_line_start = c == '\n';
    }
    WriteAll(stream, out.data(), out.size());
  }

  const bool label_;
  const std::optional<uint32_t> out_task_;
  const std::optional<uint32_t> err_task_;
  std::string pending_;
  std::map<std::pair<uint32_t, int>, bool> line_start_;
};

}  // namespace

int RunAttachCommand(const std::string& controller,
                     const std::vector<std::string>& args,
                     const std::string& program) {
  auto fail = [&program](const std::string& message) {
    std::cerr << program << ": error: " << message << "\n";
    return 1;
  };
  bool label = false;
  bool quiet = false;
  std::optional<uint32_t> out_task;
  std::optional<uint32_t> err_task;
  std::string target_step;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    const std::string name = word.substr(0, word.find('='));
    if (name == "--output-filter" || name == "--error-filter") {
      std::string value;
      if (name.size() < word.size()) {
        value = word.substr(name.size() + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      }
      uint32_t task = 0;
      if (!absl::SimpleAtoi(value, &task)) {
        return fail(absl::StrCat(name, "=", value, ": expected a task number"));
      }
      (name == "--output-filter" ? out_task : err_task) = task;
      continue;
    }
    for (const char* unsupported : kUnsupported) {
      if (name == absl::StrCat("--", unsupported)) {
        return fail(absl::StrCat(
            name, " is not supported: ", program,
            " only prints a step's output (srun --pty gives a terminal)"));
      }
    }
    if (word == "-h" || word == "--help") {
      std::cout << kAttachUsage;
      return 0;
    }
    if (word == "-V" || word == "--version") {
      std::cout << kVersionLine << "\n";
      return 0;
    }
    if (word == "-l" || word == "--label") {
      label = true;
    } else if (word == "-Q" || word == "--quiet") {
      quiet = true;
    } else if (word.size() > 1 && word[0] == '-') {
      return fail(UnrecognizedAttachOption(word, program));
    } else if (target_step.empty()) {
      target_step = word;
    } else {
      return fail(absl::StrCat("one step at a time (got ", target_step, " and ",
                               word, ")"));
    }
  }
  std::vector<std::string> parts = absl::StrSplit(target_step, '.');
  uint64_t job_id = 0;
  uint32_t step_number = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &job_id) ||
      !absl::SimpleAtoi(parts[1], &step_number) || job_id == 0 ||
      step_number >= UINT32_MAX - 1) {
    return fail(target_step.empty()
                    ? "no step given: " + program + " JOBID.STEPID"
                    : "invalid job step id '" + target_step +
                          "': expected JOBID.STEPID, such as 12.0");
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::GetJobResponse found;
  if (absl::Status status = client.GetJob(job_id, found); !status.ok()) {
    return fail(std::string(status.message()));
  }
  const v1::StepRecord* step = nullptr;
  for (const v1::StepRecord& candidate : found.job().steps()) {
    if (candidate.id() == StepIdOfSlurmNumber(step_number)) step = &candidate;
  }
  if (step == nullptr || step->end_time_ms() != 0 ||
      found.job().state() != v1::RUNNING) {
    return fail(absl::StrCat("Job step ", target_step, " is not running"));
  }
  if (step->io_token().empty() || step->io_address().empty()) {
    return fail(absl::StrCat(
        "step ", target_step,
        "'s output cannot be attached to (not yours, or its srun sends it "
        "nowhere)"));
  }
  sockaddr_storage address{};
  absl::StatusOr<socklen_t> length =
      ResolveStepIoAddress(step->io_address(), address);
  if (!length.ok()) return fail(std::string(length.status().message()));
  const int fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const std::string hello = absl::StrCat(step->io_token(), " attach\n");
  if (fd < 0 ||
      ::connect(fd, reinterpret_cast<const sockaddr*>(&address), *length) !=
          0 ||
      !WriteAll(fd, hello.data(), hello.size())) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    return fail(absl::StrCat("cannot reach the srun of step ", target_step,
                             " at ", step->io_address(), ": ",
                             std::strerror(error)));
  }
  if (!quiet) {
    std::cerr << program << ": attached to step " << target_step << "\n";
  }
  FramePrinter printer(label, out_task, err_task);
  char buffer[65536];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (!printer.Feed(std::string_view(buffer, static_cast<size_t>(got)))) {
      ::close(fd);
      return fail("the step's srun sent something that is no output");
    }
  }
  ::close(fd);
  return 0;
}

}  // namespace gantry::cli
