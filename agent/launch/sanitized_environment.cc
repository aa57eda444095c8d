#include "agent/launch/sanitized_environment.h"

namespace gantry::agent {

std::vector<std::string> SanitizedRankEnvironment(
    const std::map<std::string, std::string>& job,
    const std::map<std::string, std::string>& rank,
    const RankIdentity& identity) {
  std::map<std::string, std::string> environment = job;
  // HOME is the submitter's, as Slurm's --export=ALL propagates it; the
  // user database's home only when the job's environment has none
  // (--export=NONE), as Slurm's --get-user-env would give. Safe because
  // the rank runs with the submitting user's own uid and groups, so a HOME
  // that points elsewhere (a job submitted through `su` keeps the caller's)
  // reaches only that user's own processes, with that user's rights; and
  // nothing the agent does as root resolves a path through the job's
  // environment (output files, the working and checkpoint directories come
  // from the job's spec and are opened with the user's credentials).
  // USER, LOGNAME and SHELL name the identity the rank runs as.
  if (!identity.home.empty() && !environment.count("HOME")) {
    environment["HOME"] = identity.home;
  }
  const std::pair<const char*, const std::string*> from_identity[] = {
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
