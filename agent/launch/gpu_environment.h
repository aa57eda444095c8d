// The variables each GPU vendor's runtime reads to know which GPUs a rank
// may use, for the node the agent runs on.
//
// The controller speaks in Gantry's GPU indices (PCI bus order over all the
// node's GPUs) and sets CUDA_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL to
// them, which is right for NVIDIA GPUs (CUDA_DEVICE_ORDER=PCI_BUS_ID). AMD's
// ROCm stack reads them differently: ROCR_VISIBLE_DEVICES selects GPUs by
// the runtime's own index (ROCr's enumeration, in PCI order) and renumbers
// those it keeps from 0; HIP then applies HIP_VISIBLE_DEVICES, or
// CUDA_VISIBLE_DEVICES when that is empty, and OpenCL applies
// GPU_DEVICE_ORDINAL, to the renumbered GPUs. Setting them all to the
// physical list would hide GPUs (physical 4,5 become 0,1; "4,5" then
// selects nothing). Slurm, for the same reason, sets only
// ROCR_VISIBLE_DEVICES for AMD GPUs (gres.conf Flags=amd_gpu_env).
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gantry/v1/types.pb.h"

namespace gantry::agent {

// What a rank that may use `gpus` (Gantry indices on this node) must have
// set, over what the controller sent, on a node with AMD GPUs: nothing on a
// node without (the controller's CUDA_VISIBLE_DEVICES already numbers
// NVIDIA GPUs as CUDA does).
//
// On a node with AMD GPUs: ROCR_VISIBLE_DEVICES is the rank's AMD GPUs by
// their index among the node's AMD GPUs; HIP_VISIBLE_DEVICES and
// GPU_DEVICE_ORDINAL are 0..n-1, the numbers the rank sees after that
// renumbering (set rather than left out, so that values inherited from the
// submitting environment, such as an enclosing job's, do not apply); and
// CUDA_VISIBLE_DEVICES is 0..n-1 as well (what launchers read to count the
// GPUs) unless the node also has NVIDIA GPUs, which it then selects by their
// index among those. No GPU at all gives empty lists: an empty
// ROCR_VISIBLE_DEVICES hides every AMD GPU. GPU indices the inventory does
// not list are left out.
std::map<std::string, std::string> GpuRuntimeEnvironment(
    const v1::NodeInventory& inventory, const std::vector<uint32_t>& gpus);

}  // namespace gantry::agent
