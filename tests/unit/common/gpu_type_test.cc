// GPU types from model names: the names real servers report (the GPUModel
// and PCIDevice infos of ../shared/data/hwloc, NVML and ROCm names), the
// pci.ids names the agent gives GPUs known only by their ids, and matching
// a requested type against them.

#include "common/gpu_type.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/pci_ids.h"
#include "tests/unit/support/skip.h"

namespace gantry {
namespace gpu_type_test {

TEST_CASE("the type of each model real servers report") {
  struct Row {
    const char* model;
    const char* type;
  };
  for (const Row& row : {
           // GPUModel of compute backends (NVML, CUDA, RSMI) in the files.
           Row{"NVIDIA H100 80GB HBM3", "h100"},
           Row{"Tesla V100-SXM2-16GB", "v100"},
           Row{"Tesla V100-SXM3-32GB-H", "v100"},
           Row{"Tesla T4", "t4"},
           Row{"AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2", "mi200"},
           // PCIDevice names hwloc took from pci.ids.
           Row{"Aqua Vanjaram [Instinct MI300A]", "mi300a"},
           Row{"TU104GL [Tesla T4]", "t4"},
           Row{"GV100GL [Tesla V100 SXM2 16GB]", "v100"},
           Row{"Tesla M2075 Dual-Slot Computing Processor Module", "m2075"},
           Row{"Tahiti XT [Radeon HD 7970/8970 OEM / R9 280X]", "hd7970"},
           // pci.ids names of current data-center GPUs.
           Row{"GA100 [A100 SXM4 40GB]", "a100"},
           Row{"GA100 [A100 PCIe 80GB]", "a100"},
           Row{"GH100[H100 SXM5 80GB]", "h100"},
           Row{"GH100 [H800 PCIe]", "h800"},
           Row{"Aldebaran/MI200 [Instinct MI250X]", "mi250x"},
           Row{"Aldebaran/MI200 [Instinct MI250X/MI250]", "mi250x"},
           Row{"Vega 20 [Radeon Pro VII/Radeon Instinct MI50 32GB]", "mi50"},
           Row{"GF110GL [Tesla C2050 / C2075]", "c2050"},
           // NVML and ROCm names of others.
           Row{"NVIDIA A100-SXM4-80GB", "a100"},
           Row{"NVIDIA A100 80GB PCIe", "a100"},
           Row{"NVIDIA GH200 480GB", "gh200"},
           Row{"NVIDIA L40S", "l40s"},
           Row{"NVIDIA RTX A6000", "a6000"},
           Row{"NVIDIA GeForce RTX 4090", "rtx4090"},
           Row{"Quadro RTX 8000", "rtx8000"},
           Row{"AMD Instinct MI300X", "mi300x"},
           Row{"Intel(R) Data Center GPU Max 1550", "max1550"},
           // No word with a digit: the last word; nothing to name: "".
           Row{"Mystery", "mystery"},
           Row{"PCI 10de:20b0", ""},
           Row{"", ""},
       }) {
    INFO(row.model);
    CHECK(GpuTypeOf(row.model) == row.type);
  }
}

TEST_CASE("a GPU nothing could name keeps its PCI ids") {
  CHECK(UnnamedGpuModel(0x10de, 0x20b0) == "PCI 10de:20b0");
  CHECK(UnnamedGpuModel(0x1002, 0x74a0) == "PCI 1002:74a0");
  CHECK(IsUnnamedGpuModel("PCI 10de:20b0"));
  CHECK(IsUnnamedGpuModel("pci 10DE:20B0"));
  CHECK_FALSE(IsUnnamedGpuModel("PCI 10de:20b"));
  CHECK_FALSE(IsUnnamedGpuModel("PCI 10de-20b0"));
  CHECK_FALSE(IsUnnamedGpuModel("PCI 10de:20b0x"));
  CHECK_FALSE(IsUnnamedGpuModel("PCIe 10de:20b"));
  CHECK_FALSE(IsUnnamedGpuModel("GA100 [A100 SXM4 40GB]"));
}

TEST_CASE("a requested type matches the model's type or its whole words") {
  CHECK(GpuModelHasType("NVIDIA H100 80GB HBM3", "h100"));
  CHECK(GpuModelHasType("NVIDIA H100 80GB HBM3", "H100"));
  CHECK(GpuModelHasType("GA100 [A100 SXM4 40GB]", "a100"));
  CHECK(GpuModelHasType("NVIDIA A100-SXM4-40GB", "sxm4"));
  CHECK(GpuModelHasType("Tesla V100-SXM2-16GB", "v100-sxm2-16gb"));
  CHECK(GpuModelHasType("NVIDIA GeForce RTX 4090", "rtx4090"));
  CHECK(GpuModelHasType("NVIDIA GeForce RTX 4090", "4090"));
  // Part of a word is not the word: an A10 is no A100, nor the reverse.
  CHECK_FALSE(GpuModelHasType("NVIDIA A100-SXM4-40GB", "a10"));
  CHECK_FALSE(GpuModelHasType("NVIDIA A10", "a100"));
  CHECK_FALSE(GpuModelHasType("NVIDIA H100 80GB HBM3", "100"));
  CHECK_FALSE(GpuModelHasType("Tesla V100-SXM2-16GB", "a100"));
  CHECK_FALSE(GpuModelHasType("PCI 10de:20b0", "a100"));
  CHECK_FALSE(GpuModelHasType("NVIDIA H100 80GB HBM3", ""));
  CHECK(TypeIsWordsOfModel("nvidia a100-sxm4-40gb", "a100"));
  CHECK_FALSE(TypeIsWordsOfModel("nvidia a100-sxm4-40gb", "a10"));
  CHECK_FALSE(TypeIsWordsOfModel("nvidia a100-sxm4-40gb", ""));
}

TEST_CASE("the system's pci.ids names give the types users write") {
  absl::StatusOr<PciIds> system = PciIds::LoadFirst(PciIds::SystemPaths());
  if (!system.ok()) {
    GANTRY_SKIP(system.status().message()
                << " (Debian: apt-get install pci.ids)");
  }
  struct Row {
    uint16_t vendor, device;
    const char* type;
  };
  for (const Row& row :
       {Row{0x10de, 0x20b0, "a100"},  // meluxina, v1 XML
        Row{0x10de, 0x2330, "h100"},  // Dell XE8640
        Row{0x10de, 0x1db1, "v100"},  // IBM Power9
        Row{0x10de, 0x1db8, "v100"},  // DGX-2H
        Row{0x10de, 0x1eb8, "t4"},    // AWS g4dn
        Row{0x10de, 0x1094, "m2075"}, Row{0x1002, 0x7408, "mi250x"}}) {
    const std::optional<std::string> name =
        system->DeviceName(row.vendor, row.device);
    INFO(UnnamedGpuModel(row.vendor, row.device) << " in " << system->source());
    REQUIRE(name.has_value());
    INFO(*name);
    CHECK(GpuTypeOf(*name) == row.type);
    CHECK(GpuModelHasType(*name, row.type));
  }
}

}  // namespace gpu_type_test
}  // namespace gantry
