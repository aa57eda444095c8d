// Which GPUs a job gets on a node (see gpu_choice.h).
#include "daemon/scheduler/gpu_choice.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "daemon/scheduler/scheduler_placement.h"

namespace gantry {
namespace {

// One GPU's name at a level: `alone` shares the group with no other GPU;
// an empty `name` with no number splits nothing (the group is the next
// level's).
struct LevelName {
  bool alone = false;
  std::string_view name;
  int number = -1;
  bool operator==(const LevelName&) const = default;
};

LevelName NameAt(const GpuPlace& place, int level) {
  switch (level) {
    case 0:
      return {place.inner_switch.empty(), place.inner_switch, -1};
    case 1:
      return {place.outer_switch.empty(), place.outer_switch, -1};
    case 2:
      return {false, place.host_bridge, -1};
    case 3:
      return {false, {}, place.numa_node};
    default:
      return {false, {}, place.package};
  }
}

}  // namespace

std::vector<uint32_t> GpuGroups(const std::vector<GpuPlace>& places) {
  const std::size_t n = places.size();
  std::vector<uint32_t> groups(n * kGpuLevels, 0);
  // From the package in: a group is a (name, group one level out) pair, so
  // groups nest by construction.
  for (int level = kGpuLevels - 1; level >= 0; --level) {
    std::vector<std::pair<LevelName, uint32_t>> seen;
    for (std::size_t g = 0; g < n; ++g) {
      const uint32_t outer =
          level + 1 < kGpuLevels ? groups[g * kGpuLevels + level + 1] : 0;
      LevelName name = NameAt(places[g], level);
      uint32_t id = 0;
      if (name.alone) {
        id = static_cast<uint32_t>(seen.size());
        seen.emplace_back(LevelName{true, {}, static_cast<int>(g)}, outer);
      } else {
        const std::pair<LevelName, uint32_t> key{name, outer};
        auto it = std::find(seen.begin(), seen.end(), key);
        id = static_cast<uint32_t>(it - seen.begin());
        if (it == seen.end()) seen.push_back(key);
      }
      groups[g * kGpuLevels + level] = id;
    }
  }
  return groups;
}

namespace scheduler_internal {
namespace {

constexpr uint32_t kAlone = 0x80000000u;

// GPU `gpu`'s group at `level`; kGpuLevels is the whole node.
uint32_t GroupOf(const std::vector<uint32_t>& groups, uint32_t gpu, int level) {
  if (level >= kGpuLevels) return 0;
  const std::size_t at = std::size_t{gpu} * kGpuLevels + level;
  return at < groups.size() ? groups[at] : kAlone | gpu;
}

// `gpus` (ascending) split by their group at `level`, in order of each
// group's lowest GPU.
std::vector<std::vector<uint32_t>> SplitAt(const std::vector<uint32_t>& gpus,
                                           const std::vector<uint32_t>& groups,
                                           int level) {
  std::vector<uint32_t> ids;
  std::vector<std::vector<uint32_t>> parts;
  for (uint32_t gpu : gpus) {
    const uint32_t id = GroupOf(groups, gpu, level);
    auto it = std::find(ids.begin(), ids.end(), id);
    if (it == ids.end()) {
      ids.push_back(id);
      parts.push_back({gpu});
    } else {
      parts[static_cast<std::size_t>(it - ids.begin())].push_back(gpu);
    }
  }
  return parts;
}

// `need` GPUs out of `gpus`, which are one group at `level`: into the
// tightest child group that holds them all; else whole children, the
// largest first (the fewest children), until the rest fits in one.
void Fill(const std::vector<uint32_t>& gpus,
          const std::vector<uint32_t>& groups, int level, std::size_t need,
          std::vector<uint32_t>& chosen) {
  if (need >= gpus.size()) {
    chosen.insert(chosen.end(), gpus.begin(), gpus.end());
    return;
  }
  if (level == 0) {
    chosen.insert(chosen.end(), gpus.begin(),
                  gpus.begin() + static_cast<std::ptrdiff_t>(need));
    return;
  }
  std::vector<std::vector<uint32_t>> children =
      SplitAt(gpus, groups, level - 1);
  std::vector<bool> used(children.size(), false);
  while (need > 0) {
    std::size_t fit = children.size();
    std::size_t largest = children.size();
    for (std::size_t c = 0; c < children.size(); ++c) {
      if (used[c]) continue;
      const std::size_t size = children[c].size();
      if (size >= need &&
          (fit == children.size() || size < children[fit].size())) {
        fit = c;
      }
      if (largest == children.size() || size > children[largest].size()) {
        largest = c;
      }
    }
    if (fit != children.size()) {
      Fill(children[fit], groups, level - 1, need, chosen);
      return;
    }
    used[largest] = true;
    chosen.insert(chosen.end(), children[largest].begin(),
                  children[largest].end());
    need -= children[largest].size();
  }
}

}  // namespace

std::vector<uint32_t> ChooseGpusPacked(const std::vector<uint32_t>& free_gpus,
                                       const std::vector<uint32_t>& gpu_groups,
                                       uint32_t count) {
  if (count >= free_gpus.size()) return free_gpus;
  std::vector<uint32_t> chosen;
  if (count == 0) return chosen;
  // The nearest level at which one group holds the job; there, the group
  // with the fewest free GPUs, then the fullest surroundings (fewest free
  // at each level out), then the lowest GPU.
  for (int level = 0; level <= kGpuLevels; ++level) {
    const std::vector<std::vector<uint32_t>> parts =
        SplitAt(free_gpus, gpu_groups, level);
    const std::vector<uint32_t>* best = nullptr;
    std::array<std::size_t, kGpuLevels + 1> best_key{};
    for (const std::vector<uint32_t>& part : parts) {
      if (part.size() < count) continue;
      std::array<std::size_t, kGpuLevels + 1> key{};
      key[0] = part.size();
      for (int out = level + 1; out <= kGpuLevels; ++out) {
        const uint32_t id = GroupOf(gpu_groups, part.front(), out);
        key[static_cast<std::size_t>(out - level)] = static_cast<std::size_t>(
            std::count_if(free_gpus.begin(), free_gpus.end(), [&](uint32_t g) {
              return GroupOf(gpu_groups, g, out) == id;
            }));
      }
      if (best == nullptr || key < best_key) {
        best = &part;
        best_key = key;
      }
    }
    if (best != nullptr) {
      Fill(*best, gpu_groups, level, count, chosen);
      break;
    }
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::vector<uint32_t> ChooseGpusFor(const PendingJob& job,
                                    const NodeSnapshot& node,
                                    const std::vector<uint32_t>& free_gpus) {
  if (job.nodes == 1) {
    return ChooseGpusPacked(free_gpus, node.gpu_groups, job.gpus_per_node);
  }
  return ChooseGpus(free_gpus, node.gpu_hca, job.gpus_per_node);
}

}  // namespace scheduler_internal
}  // namespace gantry
