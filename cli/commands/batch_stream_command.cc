#include "cli/commands/batch_stream_command.h"

#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "cli/client/controller_client.h"
#include "cli/commands/batch_command.h"

namespace gantry::cli {

const char kBatchStreamHelp[] =
    R"(Usage: gantry batch-stream < JOBS

Submits many batch jobs on one connection. Each line of standard input is
one job: a JSON array of the words `gantry batch` takes, script and its
arguments included, e.g.
  ["-N", "2", "--time=10:00", "train.sh", "--lr", "0.1"]
  ["--wrap", "python3 eval.py --checkpoint 7"]
Each is prepared as `gantry batch` prepares it (#SBATCH directives,
SBATCH_* variables, this process's environment exported) and all are sent
on one SubmitStream call; a job's script must be a file or --wrap. Blank
lines are skipped.

Standard output: one JSON line per job as its answer comes (not in input
order), {"line": N, "job_id": ID} once stored, {"line": N, "error": "..."}
when refused (N counts input lines from 1). Exit status 0 when every job
was stored, 1 otherwise.

From Python: import gantry_submit (gantry_submit.submit_many; python3 -m
gantry_submit --help).
)";

namespace {

void PrintResult(size_t line, const absl::StatusOr<uint64_t>& result) {
  nlohmann::json answer{{"line", line}};
  if (result.ok()) {
    answer["job_id"] = *result;
  } else {
    answer["error"] = std::string(result.status().message());
  }
  std::cout << answer.dump() << "\n";
}

// The words of one input line; INVALID_ARGUMENT when it is not a JSON
// array of strings.
absl::StatusOr<std::vector<std::string>> LineWords(const std::string& text) {
  nlohmann::json parsed =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_array()) {
    return absl::InvalidArgumentError(
        "a line is a JSON array of gantry batch's words, e.g. "
        "[\"-N\", \"2\", \"train.sh\"]");
  }
  std::vector<std::string> words;
  for (const nlohmann::json& word : parsed) {
    if (!word.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("every word must be a string, not ", word.dump()));
    }
    words.push_back(word.get<std::string>());
  }
  return words;
}

}  // namespace

int RunBatchStreamCommand(const std::vector<std::string>& args,
                          const std::string& controller_flag) {
  if (!args.empty()) {
    std::cerr << "gantry batch-stream: error: it takes no arguments (jobs "
                 "come on standard input; see gantry batch-stream --help)\n";
    return 1;
  }
  std::vector<v1::SubmitRequest> requests;
  std::vector<size_t> lines;  // the input line of each request
  bool all_stored = true;
  std::string text;
  for (size_t line = 1; std::getline(std::cin, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    absl::StatusOr<std::vector<std::string>> words = LineWords(text);
    PreparedBatch prepared;
    absl::Status status =
        words.ok() ? PrepareBatch(*words, /*allow_stdin=*/false, prepared)
                   : words.status();
    if (status.ok() && prepared.job.version) {
      status = absl::InvalidArgumentError("-V submits nothing");
    }
    if (status.ok() && (prepared.job.wait || prepared.job.test_only)) {
      status = absl::InvalidArgumentError(
          "--wait and --test-only are for gantry batch, one job at a time");
    }
    for (const std::string& warning : prepared.job.warnings) {
      if (prepared.job.quiet) break;
      std::cerr << "gantry batch-stream: line " << line
                << ": warning: " << warning << "\n";
    }
    if (!status.ok()) {
      PrintResult(line, status);
      all_stored = false;
      continue;
    }
    requests.push_back(std::move(prepared.submit));
    lines.push_back(line);
  }
  if (requests.empty()) return all_stored ? 0 : 1;
  ControllerClient client(ResolveControllerTarget(controller_flag));
  size_t answered = 0;
  const absl::Status status = client.SubmitAll(
      std::move(requests),
      [&](size_t index, const absl::StatusOr<uint64_t>& result) {
        ++answered;
        all_stored = all_stored && result.ok();
        PrintResult(lines[index], result);
        std::cout.flush();
      });
  if (!status.ok() || answered != lines.size()) {
    std::cerr << "gantry batch-stream: error: "
              << (status.ok() ? "the stream ended early" : status.message())
              << " (" << lines.size() - answered
              << " job(s) without an answer: they may or may not have been "
                 "stored; look for them with gantry queue --me)\n";
    return 1;
  }
  return all_stored ? 0 : 1;
}

}  // namespace gantry::cli
