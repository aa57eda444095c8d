#include "cli/client/command_support.h"

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gantry::cli {

int Fail(std::string_view command, const absl::Status& status) {
  std::cerr << "gantry " << command << ": error: " << status.message() << "\n";
  return 1;
}

int ProgramError(std::string_view program, const absl::Status& status) {
  std::cerr << program << ": error: " << status.message() << "\n";
  return 1;
}

std::string CurrentUser() {
  if (passwd* entry = getpwuid(getuid())) return entry->pw_name;
  return absl::StrCat(getuid());
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string SlurmDateLine() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%a %b %d %H:%M:%S %Y", &local);
  return buffer;
}

std::vector<std::string> SplitLists(const std::vector<std::string>& lists) {
  std::vector<std::string> items;
  for (const std::string& list : lists) {
    for (absl::string_view item : absl::StrSplit(list, ',', absl::SkipEmpty()))
      items.emplace_back(item);
  }
  return items;
}

}  // namespace gantry::cli
