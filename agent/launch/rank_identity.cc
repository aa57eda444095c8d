#include "agent/launch/rank_identity.h"

#include <grp.h>
#include <pwd.h>

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gantry::agent {
namespace {

class SystemUsers : public UserDatabase {
 public:
  std::optional<UserEntry> FindUser(uid_t uid) const override {
    std::vector<char> buffer(16384);
    passwd entry{};
    passwd* found = nullptr;
    while (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) ==
               ERANGE &&
           buffer.size() < (1u << 20)) {
      buffer.resize(buffer.size() * 2);
    }
    if (found == nullptr) return std::nullopt;
    return UserEntry{entry.pw_name, entry.pw_uid, entry.pw_gid,
                     entry.pw_dir ? entry.pw_dir : "",
                     entry.pw_shell ? entry.pw_shell : ""};
  }

  std::vector<gid_t> GroupsOf(const std::string& name,
                              gid_t primary) const override {
    int count = 64;
    std::vector<gid_t> groups(count);
    if (::getgrouplist(name.c_str(), primary, groups.data(), &count) < 0) {
      groups.resize(count);
      ::getgrouplist(name.c_str(), primary, groups.data(), &count);
    }
    groups.resize(count);
    return groups;
  }
};

std::string DescribeRequestedUser(const IdentityRequest& request) {
  return request.user.empty()
             ? absl::StrCat("uid ", request.uid)
             : absl::StrCat("user ", request.user, " (uid ", request.uid, ")");
}

}  // namespace

const UserDatabase& SystemUserDatabase() {
  static const SystemUsers kUsers;
  return kUsers;
}

absl::StatusOr<RankIdentity> ResolveRankIdentity(const IdentityRequest& request,
                                                 const UserDatabase& users) {
  RankIdentity identity;
  if (!request.agent_is_root) {
    identity.uid = request.agent_uid;
    if (std::optional<UserEntry> self = users.FindUser(request.agent_uid)) {
      identity.gid = self->gid;
      identity.user = self->name;
      identity.home = self->home;
      identity.shell = self->shell;
    }
    return identity;
  }
  std::optional<UserEntry> entry = users.FindUser(request.uid);
  if (!entry) {
    return absl::FailedPreconditionError(
        absl::StrCat(DescribeRequestedUser(request), " does not exist on node ",
                     request.node));
  }
  // A name that is only the number is what the CLI sends for a user its
  // own host cannot name: nothing to compare.
  uint32_t numeric = 0;
  if (!request.user.empty() && request.user != entry->name &&
      !absl::SimpleAtoi(request.user, &numeric)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "uid ", request.uid, " is user ", entry->name, " on node ",
        request.node, ", not ", request.user,
        ": the user databases of the submit host and the node disagree"));
  }
  // The submitter's current group (they may have switched with newgrp),
  // as long as the node agrees it is one of theirs: a request for someone
  // else's group (root's) is refused, not honoured.
  std::vector<gid_t> groups = users.GroupsOf(entry->name, entry->gid);
  if (request.gid != entry->gid &&
      std::find(groups.begin(), groups.end(), request.gid) == groups.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "gid ", request.gid, " is not a group of ",
        DescribeRequestedUser(request), " on node ", request.node));
  }
  identity.switch_user = true;
  identity.uid = entry->uid;
  identity.gid = request.gid;
  identity.groups = std::move(groups);
  identity.user = entry->name;
  identity.home = entry->home;
  identity.shell = entry->shell;
  return identity;
}

}  // namespace gantry::agent
