#include "cli/views/preflight_view.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/views/output_format.h"

namespace gantry::cli {

std::string PreflightLines(const v1::AttemptRecord& attempt, int64_t now_ms) {
  if (attempt.preflight_start_ms() == 0) return "";
  std::string text;
  if (attempt.preflight_end_ms() == 0) {
    text = absl::StrFormat(
        "        Preflight: running for %.1f s\n",
        static_cast<double>(now_ms - attempt.preflight_start_ms()) / 1000.0);
  } else {
    text =
        absl::StrCat("        Preflight: ", attempt.preflight_summary(), "\n");
  }
  for (const v1::PreflightFinding& finding : attempt.preflight_findings()) {
    absl::StrAppend(&text, "          swapped out ", finding.node(), ": ",
                    finding.reason(), "\n");
  }
  return text;
}

nlohmann::json PreflightJson(const v1::AttemptRecord& attempt) {
  if (attempt.preflight_start_ms() == 0) return nullptr;
  nlohmann::json swapped = nlohmann::json::array();
  for (const v1::PreflightFinding& finding : attempt.preflight_findings()) {
    swapped.push_back({{"node", finding.node()}, {"reason", finding.reason()}});
  }
  nlohmann::json view = {
      {"start_time", FormatTime(attempt.preflight_start_ms())},
      {"end_time", FormatTime(attempt.preflight_end_ms())},
      {"summary", attempt.preflight_summary()},
      {"swapped", swapped}};
  if (attempt.preflight_end_ms() != 0) {
    view["seconds"] = static_cast<double>(attempt.preflight_end_ms() -
                                          attempt.preflight_start_ms()) /
                      1000.0;
  }
  return view;
}

}  // namespace gantry::cli
