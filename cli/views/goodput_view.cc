#include "cli/views/goodput_view.h"

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/views/output_format.h"

namespace gantry::cli {
namespace {

std::vector<std::pair<const char*, int64_t>> Segments(
    const v1::GoodputSplit& split) {
  return {{"queued", split.queued_ms()},
          {"preflight", split.preflight_ms()},
          {"starting", split.starting_ms()},
          {"productive", split.productive_ms()},
          {"lost", split.lost_ms()},
          {"detecting", split.detecting_ms()},
          {"recovering", split.recovering_ms()}};
}

// Milliseconds under a second, seconds with a tenth under a minute:
// detection and recovery are that short.
std::string Span(int64_t ms) {
  if (ms < 1'000) return absl::StrCat(ms, "ms");
  if (ms < 60'000) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1fs", static_cast<double>(ms) / 1000.0);
    return text;
  }
  return FormatDuration(ms / 1000);
}

}  // namespace

std::string GoodputLine(const v1::GoodputSplit& split) {
  std::vector<std::string> parts;
  for (const auto& [name, ms] : Segments(split)) {
    if (ms > 0) parts.push_back(absl::StrCat(name, " ", Span(ms)));
  }
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.1f%%", split.ettr() * 100.0);
  return absl::StrCat(
      "ETTR ", ratio, ": ",
      parts.empty() ? "no time yet" : absl::StrJoin(parts, ", "));
}

nlohmann::json GoodputToJson(const v1::GoodputSplit& split) {
  nlohmann::json json = {{"ettr", split.ettr()}};
  int64_t total = 0;
  for (const auto& [name, ms] : Segments(split)) {
    json[absl::StrCat(name, "_seconds")] = static_cast<double>(ms) / 1000.0;
    total += ms;
  }
  json["total_seconds"] = static_cast<double>(total) / 1000.0;
  return json;
}

}  // namespace gantry::cli
