#include "common/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "absl/base/thread_annotations.h"
#include "common/log_format.h"
#include "common/mutex.h"

namespace gantry::log {
namespace {

Mutex g_mutex;
std::string g_component ABSL_GUARDED_BY(g_mutex) = "gantry";
Level g_min_level ABSL_GUARDED_BY(g_mutex) = Level::kInfo;
Sink g_sink ABSL_GUARDED_BY(g_mutex) = Sink::kPlain;

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

Sink DetectSink() {
  const char* journal_stream = std::getenv("JOURNAL_STREAM");
  struct stat info {};
  if (journal_stream == nullptr || fstat(STDERR_FILENO, &info) != 0) {
    return Sink::kPlain;
  }
  return SinkOf(journal_stream, info.st_dev, info.st_ino);
}

}  // namespace

void Configure(std::string_view component, Level min_level) {
  Sink sink = DetectSink();
  MutexLock lock(g_mutex);
  g_component = std::string(component);
  g_min_level = min_level;
  g_sink = sink;
}

Level ParseLevel(std::string_view name, Level fallback) {
  if (name == "debug") return Level::kDebug;
  if (name == "info") return Level::kInfo;
  if (name == "warn" || name == "warning") return Level::kWarning;
  if (name == "error") return Level::kError;
  return fallback;
}

bool Enabled(Level level) {
  MutexLock lock(g_mutex);
  return level >= g_min_level;
}

void Write(Level level, std::string_view message,
           std::initializer_list<Field> fields) {
  const std::string timestamp = Timestamp();
  MutexLock lock(g_mutex);
  if (level < g_min_level) return;
  const std::string line =
      FormatLine(g_sink, level, timestamp, g_component, message, fields);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace gantry::log
