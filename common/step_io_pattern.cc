#include "common/step_io_pattern.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace gantry {
namespace {

constexpr size_t kMaxPadding = 10;

std::string Padded(uint64_t value, size_t width) {
  std::string text = absl::StrCat(value);
  if (text.size() < width) text.insert(0, width - text.size(), '0');
  return text;
}

}  // namespace

StepIoMode ParseStepIoMode(std::string_view text) {
  StepIoMode mode;
  uint32_t task = 0;
  if (text == "all") return mode;
  if (text == "none") {
    mode.kind = StepIoMode::Kind::kNone;
  } else if (!text.empty() &&
             std::all_of(text.begin(), text.end(),
                         [](char c) {
                           return std::isdigit(static_cast<unsigned char>(c));
                         }) &&
             absl::SimpleAtoi(std::string(text), &task)) {
    mode.kind = StepIoMode::Kind::kTask;
    mode.task = task;
  } else {
    mode.kind = StepIoMode::Kind::kFile;
    mode.pattern = std::string(text);
  }
  return mode;
}

std::string ExpandStepIoPattern(std::string_view pattern,
                                const StepIoNames& names) {
  if (pattern.find('\\') != std::string_view::npos) {
    return absl::StrReplaceAll(std::string(pattern), {{"\\", ""}});
  }
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    size_t j = i + 1;
    size_t width = 0;
    while (j < pattern.size() &&
           std::isdigit(static_cast<unsigned char>(pattern[j]))) {
      width = std::min(kMaxPadding, width * 10 + (pattern[j] - '0'));
      ++j;
    }
    if (j >= pattern.size()) {
      out.append(pattern.substr(i));
      break;
    }
    switch (pattern[j]) {
      case '%':
        out += '%';
        break;
      case 'j':
      case 'A':
        out += Padded(names.job_id, width);
        break;
      case 'J':
        absl::StrAppend(&out, Padded(names.job_id, width), ".", names.step_id);
        break;
      case 's':
        out += Padded(names.step_id, width);
        break;
      case 't':
        out += Padded(names.task, width);
        break;
      case 'n':
        out += Padded(names.node_index, width);
        break;
      case 'a':
        // Not an array task: Slurm's NO_VAL for the index.
        out += Padded(4294967294u, width);
        break;
      case 'N':
        out += names.node;
        break;
      case 'u':
        out += names.user;
        break;
      case 'x':
        out += names.job_name;
        break;
      default:
        out.append(pattern.substr(i, j - i + 1));
        break;
    }
    i = j;
  }
  return out;
}

bool StepIoPatternPerTask(std::string_view pattern) {
  if (pattern.find('\\') != std::string_view::npos) return false;
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    size_t j = i + 1;
    while (j < pattern.size() &&
           std::isdigit(static_cast<unsigned char>(pattern[j]))) {
      ++j;
    }
    if (j >= pattern.size()) return false;
    if (pattern[j] == 't' || pattern[j] == 'n' || pattern[j] == 'N') {
      return true;
    }
    i = j;  // "%%" is a literal %, never the start of another
  }
  return false;
}

}  // namespace gantry
