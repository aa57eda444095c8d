// GPU types: the short names users write in --gres=gpu:TYPE:N (Slurm's
// GRES type, e.g. "a100", "h100", "mi250x"), derived from the model names
// agents report, and whether a GPU answers to a type.
//
// Models come from three places, and the type must not depend on which:
// a compute backend's marketing name ("NVIDIA H100 80GB HBM3", "Tesla
// V100-SXM2-16GB", "AMD Instinct MI250X"), the pci.ids name of the PCI
// device as hwloc or the agent looked it up ("GA100 [A100 SXM4 40GB]",
// "Aqua Vanjaram [Instinct MI300A]"), or, when neither knows the device,
// its bare PCI ids ("PCI 10de:20b0", which names no type).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace gantry {

// The model of a GPU that nothing could name: "PCI 10de:20b0".
std::string UnnamedGpuModel(unsigned vendor_id, unsigned device_id);

// Whether `model` is such a bare PCI id (any case).
bool IsUnnamedGpuModel(std::string_view model);

// The GPU type of a model, lower case. From the bracketed marketing name
// of a pci.ids name when there is one, else from the whole model: words are
// split at anything but letters and digits; vendor and family words
// (NVIDIA, AMD, Tesla, Instinct, Radeon, GeForce, ...) and memory sizes
// ("80GB") are skipped; the first word holding a digit is the type
// ("a100", "v100", "mi300a", "t4"), joined to a letters-only word just
// before it when it is all digits ("RTX 4090" -> "rtx4090"). A model with
// no such word gives its last word; "" for an unnamed model or "".
std::string GpuTypeOf(std::string_view model);

// Whether a GPU of `model` answers to `type` (case does not matter): the
// model's type is `type`, or `type` is one or more whole words of the model
// ("a100" and "sxm4" match "NVIDIA A100-SXM4-40GB"; "a10" does not).
bool GpuModelHasType(std::string_view model, std::string_view type);

// The second half of GpuModelHasType on its own, for callers that keep the
// models' types already derived: whether `type` is one or more whole words
// of `model`, both already lower case.
bool TypeIsWordsOfModel(std::string_view lower_model,
                        std::string_view lower_type);

}  // namespace gantry
