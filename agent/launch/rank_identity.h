// Who a rank runs as: the submitting user, as this node's user database
// knows them (uid, primary gid, supplementary groups, home and shell).
//
// Looked up in the agent before fork (the passwd and group functions are
// not async-signal-safe), once per launch, so that a user unknown on the
// node fails every rank of the launch before any of them starts.
//
// Thread-safe: the lookups are pure functions of the database given.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::agent {

struct UserEntry {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
  std::string shell;
};

// The node's passwd and group database; a fake one in tests.
class UserDatabase {
 public:
  virtual ~UserDatabase() = default;
  virtual std::optional<UserEntry> FindUser(uid_t uid) const = 0;
  // The user's groups, `primary` included (getgrouplist).
  virtual std::vector<gid_t> GroupsOf(const std::string& name,
                                      gid_t primary) const = 0;
};

// getpwuid_r and getgrouplist (NSS: files, LDAP, sssd, as configured).
const UserDatabase& SystemUserDatabase();

struct RankIdentity {
  // False for an agent that is not root (a developer's): it can only run
  // ranks as itself, and the fields describe that user.
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary, the primary gid included
  std::string user;
  std::string home;
  std::string shell;
};

struct IdentityRequest {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;  // the submitter's name on the submit host; may be empty
  std::string node;  // this node's name, for messages
  bool agent_is_root = true;
  uid_t agent_uid = 0;  // who runs the ranks when the agent is not root
};

// The identity to run the job's ranks with.
// Errors (FAILED_PRECONDITION, fit for the job's reason):
//   "user alice (uid 1234) does not exist on node node01"
//   "uid 1234 is user bob on node node01, not alice: the user databases of
//    the submit host and the node disagree"
//   "gid 0 is not a group of user alice (uid 1234) on node node01"
absl::StatusOr<RankIdentity> ResolveRankIdentity(const IdentityRequest& request,
                                                 const UserDatabase& users);

}  // namespace gantry::agent
