#include "cli/slurm/node_gres.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/gpu_type.h"

namespace gantry::cli {

std::string NodeGres(const v1::NodeInventory& inventory) {
  if (inventory.gpus_size() == 0) return "(null)";
  std::vector<std::pair<std::string, int>> counts;  // type, GPUs
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    const std::string type = GpuTypeOf(gpu.model());
    auto it = counts.begin();
    while (it != counts.end() && it->first != type) ++it;
    if (it == counts.end()) {
      counts.emplace_back(type, 1);
    } else {
      ++it->second;
    }
  }
  std::vector<std::string> entries;
  for (const auto& [type, count] : counts) {
    entries.push_back(type.empty() ? absl::StrCat("gpu:", count)
                                   : absl::StrCat("gpu:", type, ":", count));
  }
  return absl::StrJoin(entries, ",");
}

}  // namespace gantry::cli
