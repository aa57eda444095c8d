#include "agent/launch/rank_progress.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gantry::agent {

std::string ProgressFileName(const v1::RankId& rank) {
  if (rank.step() == 0) return absl::StrCat("progress-", rank.rank());
  return absl::StrCat("progress-s", rank.step(), "-", rank.rank());
}

absl::StatusOr<RankStep> ParseProgress(std::string_view text) {
  // Debian's abseil has its own string_view: convert once.
  const std::string first_line(text.substr(0, text.find('\n')));
  const absl::string_view line = absl::StripAsciiWhitespace(first_line);
  if (line.empty()) return absl::NotFoundError("no progress yet");
  std::vector<absl::string_view> words =
      absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  RankStep parsed;
  if (words.size() > 2 || !absl::SimpleAtoi(words[0], &parsed.step) ||
      parsed.step < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a progress file holds \"STEP [STEP_SECONDS]\", not \"", line, "\""));
  }
  if (words.size() == 2 &&
      (!absl::SimpleAtod(words[1], &parsed.step_seconds) ||
       !std::isfinite(parsed.step_seconds) || parsed.step_seconds < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the step time in a progress file is a number of "
                     "seconds, 0 or more, not \"",
                     words[1], "\""));
  }
  return parsed;
}

std::optional<RankStep> ReadProgressFile(const std::string& path) {
  // O_NONBLOCK: a FIFO planted in its place does not block the reader.
  const int fd =
      ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat info {};
  char buffer[128];
  ssize_t length = -1;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    length = ::read(fd, buffer, sizeof buffer);
  }
  ::close(fd);
  if (length <= 0) return std::nullopt;
  absl::StatusOr<RankStep> parsed =
      ParseProgress(std::string_view(buffer, static_cast<size_t>(length)));
  if (!parsed.ok()) return std::nullopt;
  return *parsed;
}

std::optional<v1::NodeProgress> SummarizeRanks(
    const std::vector<std::pair<uint32_t, RankStep>>& ranks) {
  if (ranks.empty()) return std::nullopt;
  v1::NodeProgress summary;
  summary.set_step(ranks.front().second.step);
  summary.set_slowest_rank(ranks.front().first);
  for (const auto& [rank, step] : ranks) {
    summary.set_step(std::min(summary.step(), step.step));
    if (step.step_seconds > summary.step_seconds()) {
      summary.set_step_seconds(step.step_seconds);
      summary.set_slowest_rank(rank);
    }
  }
  summary.set_ranks(static_cast<uint32_t>(ranks.size()));
  return summary;
}

}  // namespace gantry::agent
