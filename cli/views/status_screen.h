// `gantry status`: the controller's ClusterStatusResponse as one screen of
// text (with or without ANSI colour) or as a stable JSON document, and the
// rule for when to colour. Pure functions (the local time zone aside, which
// FormatTime reads); thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "gantry/v1/client.pb.h"

namespace gantry::cli {

enum class ColorMode { kAuto, kAlways, kNever };

// "auto", "always" or "never", in any case; INVALID_ARGUMENT naming the
// word otherwise.
absl::StatusOr<ColorMode> ParseColorMode(std::string_view word);

// always: colour, whatever NO_COLOR says (a flag beats the environment);
// never: none; auto: only when stdout is a terminal, NO_COLOR is unset or
// empty (no-color.org) and TERM is not "dumb". Null pointers: unset.
bool ShouldUseColor(ColorMode mode, bool stdout_is_tty, const char* no_color,
                    const char* term);

// Whether the locale's character set is UTF-8 (LC_ALL, else LC_CTYPE, else
// LANG, the first that is set and not empty). Null pointers: unset.
bool LocaleIsUtf8(const char* lc_all, const char* lc_ctype, const char* lang);

struct StatusScreenOptions {
  bool color = false;
  // Block characters for the utilization sparkline; else ASCII.
  bool unicode = false;
  std::string controller;  // the target the CLI reached, shown as is
  size_t max_events = 8;   // recent failures shown
};

// The screen: one labelled line (or block) per topic, plain text unless
// `color`. Ends with a newline.
std::string RenderStatusScreen(const v1::ClusterStatusResponse& status,
                               const StatusScreenOptions& options);

// The sparkline of the utilization series: one character per bucket from
// the first to the last point (a bucket with no point, a gap, is a space),
// at most the last `width` buckets.
std::string UtilizationSparkline(const v1::ClusterStatusResponse& status,
                                 bool unicode, size_t width = 60);

// "512 B", "1.5 KiB", "12.3 MiB", "2.0 GiB".
std::string FormatBytes(uint64_t bytes);
// "0.8 ms", "12 ms", "1.25 s".
std::string FormatSeconds(double seconds);

// The --json document. Keys are stable; new ones may be added.
nlohmann::json StatusToJson(const v1::ClusterStatusResponse& status,
                            const std::string& controller);

}  // namespace gantry::cli
