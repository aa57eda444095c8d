// The `nobody` user as a job's user, for agent tests that check what a
// file operation can do with a user's credentials rather than root's.
// nullopt unless the test runs as root (only root can become another user)
// and the host has `nobody`.
#pragma once

#include <pwd.h>
#include <unistd.h>

#include <optional>

#include "agent/launch/rank_identity.h"

namespace gantry::agent {

inline std::optional<RankIdentity> NobodyIdentity() {
  const passwd* entry = ::getpwnam("nobody");
  if (::geteuid() != 0 || entry == nullptr) return std::nullopt;
  RankIdentity user;
  user.switch_user = true;
  user.uid = entry->pw_uid;
  user.gid = entry->pw_gid;
  user.groups = {entry->pw_gid};
  user.user = "nobody";
  return user;
}

}  // namespace gantry::agent
