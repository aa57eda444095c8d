// Structured logging: one line per event, logfmt style
// (`ts=... level=info component=gantryd msg="job started" job=12 nodes=2`),
// to stderr, which systemd's journal or a test's log file captures.
// Under the journal the timestamp gives way to a `<N>` priority prefix
// (common/log_format.h); Configure detects that.
//
// Thread-safe: lines from different threads never interleave.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace gantry::log {

enum class Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// One key=value pair of a log line. Integers are formatted by the caller's
// choice of constructor so call sites stay short.
struct Field {
  Field(std::string_view k, std::string_view v) : key(k), value(v) {}
  Field(std::string_view k, const char* v) : key(k), value(v) {}
  Field(std::string_view k, const std::string& v) : key(k), value(v) {}
  template <typename Int,
            typename = std::enable_if_t<std::is_arithmetic_v<Int>>>
  Field(std::string_view k, Int v) : key(k), value(std::to_string(v)) {}
  std::string key;
  std::string value;
};

// Sets the component name printed on every line and the lowest level shown.
void Configure(std::string_view component, Level min_level);
Level ParseLevel(std::string_view name, Level fallback);

// Whether lines at `level` are shown: lets a hot path skip building the
// fields of a line nobody will see.
bool Enabled(Level level);

void Write(Level level, std::string_view message,
           std::initializer_list<Field> fields = {});

inline void Debug(std::string_view m, std::initializer_list<Field> f = {}) {
  Write(Level::kDebug, m, f);
}
inline void Info(std::string_view m, std::initializer_list<Field> f = {}) {
  Write(Level::kInfo, m, f);
}
inline void Warn(std::string_view m, std::initializer_list<Field> f = {}) {
  Write(Level::kWarning, m, f);
}
inline void Error(std::string_view m, std::initializer_list<Field> f = {}) {
  Write(Level::kError, m, f);
}

}  // namespace gantry::log
