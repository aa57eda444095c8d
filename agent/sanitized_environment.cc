#include "agent/sanitized_environment.h"

namespace gantry::agent {

std::vector<std::string> SanitizedRankEnvironment(
    const std::map<std::string, std::string>& job,
    const std::map<std::string, std::string>& rank,
    const RankIdentity& identity) {
  std::map<std::string, std::string> environment = job;
  // A job submitted through sudo or su carries the submitter's session
  // (HOME=/root): the rank's files would land in someone else's home.
  const std::pair<const char*, const std::string*> from_identity[] = {
      {"HOME", &identity.home},
      {"USER", &identity.user},
      {"LOGNAME", &identity.user},
      {"SHELL", &identity.shell},
  };
  for (const auto& [key, value] : from_identity) {
    if (!value->empty()) environment[key] = *value;
  }
  if (!environment.count("PATH")) {
    environment["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  }
  for (const auto& [key, value] : rank) environment[key] = value;
  std::vector<std::string> strings;
  strings.reserve(environment.size());
  for (const auto& [key, value] : environment) {
    strings.push_back(key + "=" + value);
  }
  return strings;
}

}  // namespace gantry::agent
