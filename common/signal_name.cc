#include "common/signal_name.h"

#include <csignal>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

constexpr std::pair<const char*, int> kSignals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},     {"QUIT", SIGQUIT},
    {"ABRT", SIGABRT}, {"KILL", SIGKILL},   {"USR1", SIGUSR1},
    {"USR2", SIGUSR2}, {"ALRM", SIGALRM},   {"TERM", SIGTERM},
    {"CONT", SIGCONT}, {"STOP", SIGSTOP},   {"TSTP", SIGTSTP},
    {"URG", SIGURG},   {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ},
    {"PIPE", SIGPIPE}, {"WINCH", SIGWINCH},
};

}  // namespace

absl::StatusOr<int> ParseSignal(std::string_view text) {
  int number = 0;
  const absl::string_view given(text.data(), text.size());
  if (absl::SimpleAtoi(given, &number)) {
    if (number >= 1 && number <= 64) return number;
  } else {
    std::string word = absl::AsciiStrToUpper(given);
    if (word.rfind("SIG", 0) == 0) word = word.substr(3);
    for (const auto& [name, value] : kSignals) {
      if (word == name) return value;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid signal \"", given,
      "\": give a name such as USR1, SIGUSR1, TERM or a number from 1 to 64"));
}

}  // namespace gantry
