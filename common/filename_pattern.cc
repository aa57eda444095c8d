#include "common/filename_pattern.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "absl/strings/ascii.h"

namespace gantry {

// Beyond the documented sequences, a zero-padding width is accepted as in
// sbatch: "%5j" pads the job id with zeros to 5 digits (so do %5A and
// %5a; widths above 10 act as 10); a width before %x or %u is ignored since
// those are not numbers.
// Unknown sequences (%N, %t, %3t, ...) and a trailing lone '%' are copied
// unchanged.
std::string ExpandFilenamePattern(std::string_view pattern, uint64_t job_id,
                                  std::string_view job_name,
                                  std::string_view user,
                                  std::optional<ArrayTaskIds> array_task) {
  // Slurm's NO_VAL: what %a is for a job that is no array task.
  constexpr uint32_t kNoTask = 4294967294u;
  auto padded = [](uint64_t value, std::size_t width) {
    std::string text = std::to_string(value);
    if (text.size() < width) text.insert(0, width - text.size(), '0');
    return text;
  };
  constexpr std::size_t kMaxWidth = 10;
  std::string out;
  out.reserve(pattern.size());
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out.push_back(pattern[i]);
      continue;
    }
    std::size_t j = i + 1;
    std::size_t width = 0;
    while (j < pattern.size() &&
           absl::ascii_isdigit(static_cast<unsigned char>(pattern[j]))) {
      width = std::min(kMaxWidth, width * 10 + (pattern[j] - '0'));
      ++j;
    }
    if (j >= pattern.size()) {
      out.append(pattern.substr(i));
      break;
    }
    const bool has_width = j > i + 1;
    switch (pattern[j]) {
      case 'j':
        out.append(padded(job_id, width));
        break;
      case 'A':
        out.append(
            padded(array_task ? array_task->array_job_id : job_id, width));
        break;
      case 'a':
        out.append(padded(array_task ? array_task->task_id : kNoTask, width));
        break;
      case 'x':
        out.append(job_name);
        break;
      case 'u':
        out.append(user);
        break;
      case '%':
        if (!has_width) {
          out.push_back('%');
          break;
        }
        [[fallthrough]];
      default:
        out.append(pattern.substr(i, j - i + 1));
    }
    i = j;
  }
  return out;
}

std::string ExpandNodeInPath(std::string_view path, std::string_view node) {
  const std::string_view short_name = node.substr(0, node.find('.'));
  std::string out;
  out.reserve(path.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'N') {
      out += short_name;
      ++i;
      continue;
    }
    out += path[i];
  }
  return out;
}

}  // namespace gantry
