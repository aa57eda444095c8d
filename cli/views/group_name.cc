#include "cli/views/group_name.h"

#include <grp.h>

#include "absl/strings/str_cat.h"

namespace gantry::cli {

std::string GroupName(uint32_t gid) {
  if (::group* entry = getgrgid(gid)) return entry->gr_name;
  return absl::StrCat(gid);
}

}  // namespace gantry::cli
