#include "common/job_array.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/split_view.h"
#include "common/text.h"

namespace gantry {
namespace {

// A longer value is no real array (10,000 tasks fit in far less); the cap
// bounds the work a hostile value can cause the controller.
constexpr std::size_t kMaxTextChars = 8192;
// Values are quoted in messages; keep them short.
constexpr std::size_t kMaxQuotedArrayChars = 40;

absl::Status InvalidArray(const std::string& why) {
  return absl::InvalidArgumentError(why);
}

constexpr char kForm[] =
    "expected indices such as 0-15, 1,3,5-7 or 0-15:4, optionally followed "
    "by %N (at most N tasks running at once)";

// A whole number, or nullopt when `text` is not digits. Values past the
// limits are clamped to one above the largest limit, so the caller can say
// "above the limit" without overflow.
std::optional<uint64_t> Number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = std::min<uint64_t>(value * 10 + static_cast<uint64_t>(c - '0'),
                               uint64_t{kMaxArrayTaskId} + 1);
  }
  return value;
}

absl::StatusOr<uint32_t> Index(std::string_view text, std::string_view entry) {
  const std::optional<uint64_t> value = Number(text);
  if (!value.has_value()) {
    return InvalidArray(
        absl::StrCat(QuoteForMessage(entry, kMaxQuotedArrayChars),
                     " is not an index or range: ", kForm));
  }
  if (*value > kMaxArrayTaskId) {
    return InvalidArray(absl::StrCat("index ", std::string(text),
                                     " is above the limit of ",
                                     kMaxArrayTaskId));
  }
  return static_cast<uint32_t>(*value);
}

}  // namespace

uint32_t JobArraySpec::step() const {
  if (task_ids.size() < 2) return 1;
  const uint32_t step = task_ids[1] - task_ids[0];
  for (std::size_t i = 2; i < task_ids.size(); ++i) {
    if (task_ids[i] - task_ids[i - 1] != step) return 1;
  }
  return step;
}

absl::StatusOr<JobArraySpec> ParseJobArray(std::string_view text) {
  if (text.empty()) return InvalidArray(absl::StrCat("empty value: ", kForm));
  if (text.size() > kMaxTextChars) {
    return InvalidArray(
        absl::StrCat("longer than ", kMaxTextChars, " characters"));
  }
  JobArraySpec spec;
  if (const std::size_t percent = text.find('%');
      percent != std::string_view::npos) {
    const std::string_view limit = text.substr(percent + 1);
    const std::optional<uint64_t> value = Number(limit);
    if (!value.has_value()) {
      return InvalidArray(
          absl::StrCat("the limit after '%' must be a whole number "
                       "of tasks (got ",
                       QuoteForMessage(limit, kMaxQuotedArrayChars), ")"));
    }
    if (*value == 0) {
      return InvalidArray("the limit after '%' must be at least 1 task");
    }
    spec.max_running =
        static_cast<uint32_t>(std::min<uint64_t>(*value, kMaxArrayTasks));
    text = text.substr(0, percent);
    if (text.empty()) return InvalidArray(absl::StrCat("no indices: ", kForm));
  }
  // Overlapping entries merge, as in Slurm; a bitmap keeps that linear.
  std::vector<bool> present;
  std::size_t count = 0;
  for (std::string_view entry : SplitView(text, ',')) {
    if (entry.empty()) {
      return InvalidArray(absl::StrCat(
          "empty entry in ", QuoteForMessage(text, kMaxQuotedArrayChars), ": ",
          kForm));
    }
    std::string_view range = entry;
    uint32_t step = 1;
    if (const std::size_t colon = entry.find(':');
        colon != std::string_view::npos) {
      range = entry.substr(0, colon);
      const std::string_view step_text = entry.substr(colon + 1);
      const std::optional<uint64_t> value = Number(step_text);
      if (!value.has_value() || *value == 0) {
        return InvalidArray(absl::StrCat(
            "the step in ", QuoteForMessage(entry, kMaxQuotedArrayChars),
            " must be a whole number of at least 1"));
      }
      if (range.find('-') == std::string_view::npos) {
        return InvalidArray(
            absl::StrCat("a step needs a range (START-END:STEP), "
                         "got ",
                         QuoteForMessage(entry, kMaxQuotedArrayChars)));
      }
      step = static_cast<uint32_t>(*value);  // clamped to kMaxArrayTaskId + 1
    }
    uint32_t first = 0, last = 0;
    if (const std::size_t dash = range.find('-');
        dash != std::string_view::npos) {
      absl::StatusOr<uint32_t> start = Index(range.substr(0, dash), entry);
      if (!start.ok()) return start.status();
      absl::StatusOr<uint32_t> end = Index(range.substr(dash + 1), entry);
      if (!end.ok()) return end.status();
      if (*start > *end) {
        return InvalidArray(absl::StrCat(
            "the range ", QuoteForMessage(entry, kMaxQuotedArrayChars),
            " starts above its end"));
      }
      first = *start;
      last = *end;
    } else {
      absl::StatusOr<uint32_t> index = Index(range, entry);
      if (!index.ok()) return index.status();
      first = last = *index;
    }
    // One range past the limit is too many whatever else is listed; the
    // check also bounds the loop below.
    const uint64_t in_range = (uint64_t{last} - first) / step + 1;
    if (in_range > kMaxArrayTasks) {
      return InvalidArray(
          absl::StrCat(QuoteForMessage(entry, kMaxQuotedArrayChars), " is ",
                       in_range, " tasks; the limit is ", kMaxArrayTasks));
    }
    if (present.size() <= last) present.resize(uint64_t{last} + 1);
    for (uint64_t id = first; id <= last; id += step) {
      if (!present[id]) {
        present[id] = true;
        ++count;
      }
    }
    if (count > kMaxArrayTasks) {
      return InvalidArray(absl::StrCat("more than ", kMaxArrayTasks,
                                       " tasks; the limit is ",
                                       kMaxArrayTasks));
    }
  }
  spec.task_ids.reserve(count);
  for (std::size_t id = 0; id < present.size(); ++id) {
    if (present[id]) spec.task_ids.push_back(static_cast<uint32_t>(id));
  }
  return spec;
}

std::string FormatJobArray(const JobArraySpec& spec) {
  std::vector<std::string> parts;
  const std::vector<uint32_t>& ids = spec.task_ids;
  for (std::size_t i = 0; i < ids.size();) {
    // The longest run from i with one step: "a-b" for a step of 1 (two or
    // more ids), "a-b:s" for a larger step (three or more). A stepped run
    // leaves an id that starts a step-1 run to that run: "1,3,5-7", not
    // "1-5:2,6-7".
    auto starts_consecutive = [&ids](std::size_t j) {
      return j + 1 < ids.size() && ids[j + 1] == ids[j] + 1;
    };
    std::size_t end = i + 1;
    if (end < ids.size()) {
      const uint32_t step = ids[end] - ids[i];
      auto joins = [&](std::size_t j) {
        return ids[j] - ids[j - 1] == step &&
               (step == 1 || !starts_consecutive(j));
      };
      if (!joins(end)) end = i;
      while (end > i && end + 1 < ids.size() && joins(end + 1)) ++end;
      const std::size_t length = end - i + 1;
      if (end > i && (step == 1 || length >= 3)) {
        parts.push_back(step == 1
                            ? absl::StrCat(ids[i], "-", ids[end])
                            : absl::StrCat(ids[i], "-", ids[end], ":", step));
        i = end + 1;
        continue;
      }
    }
    parts.push_back(absl::StrCat(ids[i]));
    ++i;
  }
  std::string text;
  for (const std::string& part : parts) {
    if (!text.empty()) text += ',';
    text += part;
  }
  if (spec.max_running > 0) absl::StrAppend(&text, "%", spec.max_running);
  return text;
}

}  // namespace gantry
