// GPU visibility variables per vendor (see gpu_environment.h).
#include "agent/launch/gpu_environment.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gantry::agent {
namespace {

bool IsAmd(const v1::GpuInfo& gpu) { return gpu.vendor() == "AMD"; }

// "0,1,...,n-1".
std::string FirstN(std::size_t n) {
  std::vector<std::string> numbers;
  for (std::size_t i = 0; i < n; ++i) numbers.push_back(absl::StrCat(i));
  return absl::StrJoin(numbers, ",");
}

}  // namespace

std::map<std::string, std::string> GpuRuntimeEnvironment(
    const v1::NodeInventory& inventory, const std::vector<uint32_t>& gpus) {
  const auto& all = inventory.gpus();
  if (std::none_of(all.begin(), all.end(), IsAmd)) return {};
  // Each runtime numbers only its own vendor's GPUs, in PCI bus order, as
  // Gantry's indices run.
  std::vector<const v1::GpuInfo*> by_index(static_cast<std::size_t>(all.size()),
                                           nullptr);
  for (const v1::GpuInfo& gpu : all) {
    if (gpu.index() < by_index.size()) by_index[gpu.index()] = &gpu;
  }
  std::vector<uint32_t> amd;
  std::vector<uint32_t> other;
  for (uint32_t gpu : gpus) {
    if (gpu >= by_index.size() || by_index[gpu] == nullptr) continue;
    const bool is_amd = IsAmd(*by_index[gpu]);
    uint32_t ordinal = 0;
    for (uint32_t before = 0; before < gpu; ++before) {
      if (by_index[before] != nullptr && IsAmd(*by_index[before]) == is_amd) {
        ++ordinal;
      }
    }
    (is_amd ? amd : other).push_back(ordinal);
  }
  const bool node_has_other = !std::all_of(all.begin(), all.end(), IsAmd);
  const std::string renumbered = FirstN(amd.size());
  return {
      {"ROCR_VISIBLE_DEVICES", absl::StrJoin(amd, ",")},
      {"HIP_VISIBLE_DEVICES", renumbered},
      {"GPU_DEVICE_ORDINAL", renumbered},
      {"CUDA_VISIBLE_DEVICES",
       node_has_other ? absl::StrJoin(other, ",") : renumbered},
  };
}

}  // namespace gantry::agent
