#include "cli/client/job_selector.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "cli/client/command_support.h"

namespace gantry::cli {

bool JobSelector::Matches(const v1::JobRecord& job) const {
  if (task.has_value()) {
    return job.array_job_id() == id && job.array_task_id() == *task;
  }
  return job.id() == id || job.array_job_id() == id;
}

bool ParseJobId(const std::string& text, uint64_t& id) {
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), id);
  return error == std::errc() && end == text.data() + text.size() && id > 0;
}

std::optional<JobSelector> ParseJobSelector(const std::string& text) {
  JobSelector selector;
  const size_t underscore = text.find('_');
  if (!ParseJobId(text.substr(0, underscore), selector.id)) return std::nullopt;
  if (underscore != std::string::npos) {
    const std::string task = text.substr(underscore + 1);
    uint32_t index = 0;
    auto [end, error] =
        std::from_chars(task.data(), task.data() + task.size(), index);
    if (task.empty() || error != std::errc() ||
        end != task.data() + task.size()) {
      return std::nullopt;
    }
    selector.task = index;
  }
  return selector;
}

absl::StatusOr<std::vector<JobSelector>> ParseJobSelectors(
    const std::vector<std::string>& lists) {
  std::vector<JobSelector> selectors;
  for (const std::string& text : SplitLists(lists)) {
    std::optional<JobSelector> selector = ParseJobSelector(text);
    if (!selector.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid job id \"", text, "\" (expected ID or ARRAYID_TASK)"));
    }
    selectors.push_back(*selector);
  }
  return selectors;
}

void AddSelectors(const std::vector<JobSelector>& selectors,
                  v1::JobFilter& filter) {
  for (const JobSelector& selector : selectors) {
    v1::JobSelector* added = filter.add_jobs();
    added->set_job_id(selector.id);
    if (selector.task.has_value()) added->set_array_task_id(*selector.task);
  }
}

bool Selected(const std::vector<JobSelector>& selectors,
              const v1::JobRecord& job) {
  return selectors.empty() ||
         std::any_of(selectors.begin(), selectors.end(),
                     [&](const JobSelector& s) { return s.Matches(job); });
}

}  // namespace gantry::cli
