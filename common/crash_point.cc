#include "common/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gantry {
namespace {

constexpr char kVariable[] = "GANTRY_CRASH_AT";

struct ArmedPoint {
  std::string name;
  uint64_t on_hit = 1;
  std::atomic<uint64_t> hits{0};
};

struct Arming {
  // A deque: ArmedPoint holds an atomic and must not move.
  std::deque<ArmedPoint> points;
  std::vector<std::string> malformed;
};

Arming ParseArming() {
  Arming arming;
  const char* value = std::getenv(kVariable);
  if (value == nullptr || std::string_view(value) == "list") return arming;
  for (absl::string_view item :
       absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    const size_t colon = item.find(':');
    ArmedPoint& point = arming.points.emplace_back();
    point.name = std::string(item.substr(0, colon));
    if (colon != absl::string_view::npos &&
        (!absl::SimpleAtoi(item.substr(colon + 1), &point.on_hit) ||
         point.on_hit == 0)) {
      arming.malformed.push_back(std::string(item));
    }
  }
  return arming;
}

Arming& Armed() {
  static Arming arming = ParseArming();
  return arming;
}

}  // namespace

void CrashPoint(CrashPointName crash_point) {
  const std::string_view name = crash_point.view();
  Arming& arming = Armed();
  if (arming.points.empty()) return;
  for (ArmedPoint& point : arming.points) {
    if (point.name != name) continue;
    if (point.hits.fetch_add(1) + 1 != point.on_hit) continue;
    // One write, no buffering: the process dies on the next line, as it
    // would to kill -9, with nothing flushed or destroyed.
    std::string line = absl::StrCat("crash point ", std::string(name),
                                    " reached: dying (", kVariable, ")\n");
    (void)!::write(STDERR_FILENO, line.data(), line.size());
    ::kill(::getpid(), SIGKILL);
    ::pause();
  }
}

absl::Status CheckCrashPointsArmed(std::span<const std::string_view> known) {
  const char* value = std::getenv(kVariable);
  if (value != nullptr && std::string_view(value) == "list") {
    for (std::string_view point : known) std::cout << point << "\n";
    std::cout.flush();
    std::exit(0);
  }
  const Arming& arming = Armed();
  if (!arming.malformed.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kVariable, ": '", arming.malformed.front(),
                     "' is not NAME or NAME:HIT with HIT >= 1"));
  }
  for (const ArmedPoint& point : arming.points) {
    if (std::find(known.begin(), known.end(), point.name) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kVariable, ": this process has no crash point '",
                       point.name, "' (GANTRY_CRASH_AT=list prints them)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gantry
