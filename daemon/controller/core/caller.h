// Who is asking: the identity the controller proved (MUNGE) or, with
// authentication off, the one the client claimed. Every client API call
// carries one; ownership and admin checks read it, never the request.
#pragma once

#include <cstdint>
#include <string>

namespace gantry {

struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;    // the name of uid on the controller's host
  bool admin = false;  // root, or a member of the admin group

  // Owners and admins may act on a job and read its script.
  bool MayManage(uint32_t owner_uid) const { return admin || uid == owner_uid; }
};

}  // namespace gantry
