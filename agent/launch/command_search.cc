#include "agent/launch/command_search.h"

#include <string_view>

namespace gantry::agent {
namespace {

// execvp's search path when PATH is unset (glibc's _CS_PATH).
constexpr std::string_view kDefaultPath = "/bin:/usr/bin";

std::string_view TaskPath(const std::vector<std::string>& environment) {
  constexpr std::string_view kPrefix = "PATH=";
  for (const std::string& entry : environment) {
    if (std::string_view(entry).substr(0, kPrefix.size()) == kPrefix) {
      return std::string_view(entry).substr(kPrefix.size());
    }
  }
  return kDefaultPath;
}

}  // namespace

std::vector<std::string> CommandCandidates(
    const std::string& command, const std::vector<std::string>& environment) {
  if (command.empty()) return {};
  if (command.find('/') != std::string::npos) return {command};
  std::vector<std::string> candidates;
  std::string_view path = TaskPath(environment);
  while (true) {
    const size_t colon = path.find(':');
    std::string_view directory = path.substr(0, colon);
    // An empty entry means the working directory, as in execvp.
    candidates.push_back(
        directory.empty() ? command : std::string(directory) + "/" + command);
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return candidates;
}

}  // namespace gantry::agent
