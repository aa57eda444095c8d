#include "common/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace gantry::log {
namespace {

std::mutex g_mutex;
std::string g_component = "gantry";  // guarded by g_mutex
Level g_min_level = Level::kInfo;    // guarded by g_mutex

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarning:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

// Quotes a value when it holds spaces, quotes or '=' so lines stay parseable.
void AppendValue(std::string& out, std::string_view value) {
  bool needs_quotes = value.empty();
  for (char c : value) {
    if (c == ' ' || c == '"' || c == '=' || c == '\n' || c == '\t') {
      needs_quotes = true;
      break;
    }
  }
  if (!needs_quotes) {
    out.append(value);
    return;
  }
  out.push_back('"');
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

std::string Timestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                    now.time_since_epoch())
                    .count() %
                1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                utc.tm_min, utc.tm_sec, static_cast<int>(millis));
  return buffer;
}

}  // namespace

void Configure(std::string_view component, Level min_level) {
  std::lock_guard lock(g_mutex);
  g_component = std::string(component);
  g_min_level = min_level;
}

Level ParseLevel(std::string_view name, Level fallback) {
  if (name == "debug") return Level::kDebug;
  if (name == "info") return Level::kInfo;
  if (name == "warn" || name == "warning") return Level::kWarning;
  if (name == "error") return Level::kError;
  return fallback;
}

void Write(Level level, std::string_view message,
           std::initializer_list<Field> fields) {
  std::string line;
  line.reserve(128);
  line.append("ts=").append(Timestamp());
  line.append(" level=").append(LevelName(level));
  std::lock_guard lock(g_mutex);
  if (level < g_min_level) return;
  line.append(" component=").append(g_component);
  line.append(" msg=");
  AppendValue(line, message);
  for (const Field& field : fields) {
    line.push_back(' ');
    line.append(field.key).push_back('=');
    AppendValue(line, field.value);
  }
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace gantry::log
