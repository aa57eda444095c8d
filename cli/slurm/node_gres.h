// A node's GPUs as Slurm prints its Gres (sinfo %G, scontrol show node):
// "gpu:h100:4", by the types users write in --gres=gpu:TYPE:N
// (common/gpu_type.h), so the names a node shows are the ones that select
// it. Pure; thread-safe.
#pragma once

#include <string>

#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// "gpu:TYPE:N" for each type in the order its first GPU comes, comma
// separated ("gpu:m2075:2,gpu:k40m:1"); "gpu:N" for GPUs without a type
// (known only by PCI ids); "(null)" for none.
std::string NodeGres(const v1::NodeInventory& inventory);

}  // namespace gantry::cli
