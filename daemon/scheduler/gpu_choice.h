// Which of a node's free GPUs a job gets, by the job's shape.
//
// A job on several nodes talks between nodes over the HCAs: each rank's GPU
// gets an HCA rail of its own, so the GPUs are spread over distinct HCAs
// (ChooseGpus in scheduler_placement.h). A job on one node talks over
// PCIe/NVLink inside it: its GPUs are packed close together, behind one
// PCIe switch if it fits, else under one host bridge, one NUMA node, one
// package; among equally close choices the tightest (the group with the
// fewest free GPUs, in the fullest surroundings), so whole groups stay free
// for the next jobs.
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "daemon/scheduler/scheduler_types.h"

namespace gantry {

// Levels of nearness between two GPUs of a node, nearest first: behind the
// same nearest PCIe switch, behind the same outermost switch, under the
// same host bridge (root complex), on the same NUMA node, in the same
// package. Past the last level they only share the node.
inline constexpr int kGpuLevels = 5;

// Where one GPU sits, as its node's agent reports it; the views must outlive
// the call that takes them.
struct GpuPlace {
  std::string_view inner_switch;  // nearest PCIe switch above it; "": none
  std::string_view outer_switch;  // outermost one; "": none
  std::string_view host_bridge;   // "": unknown
  int numa_node = -1;             // -1: unknown
  int package = -1;               // -1: unknown
};

// NodeSnapshot.gpu_groups for GPUs 0..n-1 placed at `places`: entry
// [g * kGpuLevels + level] is GPU g's group at that level. Groups nest:
// GPUs together at a level are together at every later one. A GPU behind
// no switch shares its switch levels with no other GPU; an unknown host
// bridge, NUMA node or package splits nothing (the GPUs stay together as
// far as the next known level says).
std::vector<uint32_t> GpuGroups(const std::vector<GpuPlace>& places);

namespace scheduler_internal {

// `count` GPUs of `free_gpus` (ascending) packed close together, as the
// header says; `gpu_groups` as GpuGroups returns them (empty or short: the
// GPUs it does not cover are near no other). Ascending; all of `free_gpus`
// when count reaches its size.
std::vector<uint32_t> ChooseGpusPacked(const std::vector<uint32_t>& free_gpus,
                                       const std::vector<uint32_t>& gpu_groups,
                                       uint32_t count);

// The GPUs `job` takes on `node` out of `free_gpus`: packed for a job that
// asks for one node, spread over HCAs for one that may span several.
std::vector<uint32_t> ChooseGpusFor(const PendingJob& job,
                                    const NodeSnapshot& node,
                                    const std::vector<uint32_t>& free_gpus);

}  // namespace scheduler_internal
}  // namespace gantry
