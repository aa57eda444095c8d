#include "daemon/controller/core/preflight_record.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gantry {

bool PreflightInProgress(const v1::JobRecord& record) {
  if (record.attempts_size() == 0) return false;
  const v1::AttemptRecord& last = record.attempts(record.attempts_size() - 1);
  return last.preflight_start_ms() != 0 && last.preflight_end_ms() == 0 &&
         last.end_time_ms() == 0;
}

std::string WithPreflightNote(const v1::JobRecord& record,
                              const std::string& detail) {
  if (record.attempts_size() == 0) return detail;
  const v1::AttemptRecord& last = record.attempts(record.attempts_size() - 1);
  if (last.end_reason() != kPreflightReason ||
      last.preflight_findings().empty()) {
    return detail;
  }
  std::vector<std::string> names;
  for (const v1::PreflightFinding& f : last.preflight_findings()) {
    names.push_back(f.node());
  }
  return absl::StrCat("pre-flight swapped out ", absl::StrJoin(names, ","),
                      "; waiting for replacements: ", detail);
}

}  // namespace gantry
