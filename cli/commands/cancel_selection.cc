#include "cli/commands/cancel_selection.h"

#include "absl/strings/str_cat.h"

namespace gantry::cli {

bool JobOnNodes(const v1::JobRecord& job, const std::set<std::string>& nodes) {
  if (nodes.empty()) return true;
  for (const v1::NodeAllocation& share : job.allocation()) {
    if (nodes.count(share.node())) return true;
  }
  return false;
}

bool ConfirmCancel(const v1::JobRecord& job, std::istream& in,
                   std::ostream& out) {
  const std::string id =
      job.array_job_id()
          ? absl::StrCat(job.array_job_id(), "_", job.array_task_id())
          : absl::StrCat(job.id());
  std::string line;
  while (true) {
    out << "Cancel job_id=" << id << " name=" << job.spec().name()
        << " partition=" << job.spec().partition() << " [y/n]? " << std::flush;
    if (!std::getline(in, line)) {
      out << "\n";
      return false;
    }
    if (!line.empty() && (line[0] == 'y' || line[0] == 'Y')) return true;
    if (!line.empty() && (line[0] == 'n' || line[0] == 'N')) return false;
  }
}

}  // namespace gantry::cli
