// A node's user database held in maps, for agent tests of who a rank or a
// dataset copy acts as. Thread-compatible: fill it before use.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/launch/rank_identity.h"

namespace gantry::agent {

class FakeUsers : public UserDatabase {
 public:
  std::optional<UserEntry> FindUser(uid_t uid) const override {
    auto it = users.find(uid);
    if (it == users.end()) return std::nullopt;
    return it->second;
  }
  // The primary group and those listed in `groups` for the name.
  std::vector<gid_t> GroupsOf(const std::string& name,
                              gid_t primary) const override {
    std::vector<gid_t> result = {primary};
    auto it = groups.find(name);
    if (it != groups.end()) {
      result.insert(result.end(), it->second.begin(), it->second.end());
    }
    return result;
  }
  std::map<uid_t, UserEntry> users;
  std::map<std::string, std::vector<gid_t>> groups;
};

}  // namespace gantry::agent
