// libFuzzer target for the pci.ids reader and the GPU types derived from
// the names it returns. pci.ids is a system file, not user input, but a
// damaged or odd one must not stop an agent.
//
// Beyond "no crash": every name found is non-empty with no blank at either
// end, looking an id up twice gives the same answer, and the GPU type of
// any name is lower case letters and digits only, and a type its model
// answers to.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "common/gpu_type.h"
#include "common/pci_ids.h"

namespace {

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "check failed: %s\n", what);
    std::abort();
  }
}

bool Blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

void CheckName(const std::string& name) {
  Check(!name.empty(), "name not empty");
  Check(!Blank(name.front()) && !Blank(name.back()), "name trimmed");
  const std::string type = gantry::GpuTypeOf(name);
  for (char c : type) {
    Check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'),
          "type is lower-case letters and digits");
  }
  if (!type.empty()) {
    Check(gantry::GpuModelHasType(name, type), "a model has its own type");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;  // keeps each run in microseconds
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const gantry::PciIds ids = gantry::PciIds::Parse(input);
  // Look up the ids the input itself names at the start of its lines.
  for (size_t at = 0; at + 9 < input.size(); ++at) {
    const uint16_t vendor =
        static_cast<uint16_t>(static_cast<uint8_t>(input[at]) << 8 |
                              static_cast<uint8_t>(input[at + 1]));
    const uint16_t device =
        static_cast<uint16_t>(static_cast<uint8_t>(input[at + 2]) << 8 |
                              static_cast<uint8_t>(input[at + 3]));
    const std::optional<std::string> name = ids.DeviceName(vendor, device);
    Check(name == ids.DeviceName(vendor, device), "lookups agree");
    if (name.has_value()) CheckName(*name);
  }
  for (uint16_t vendor : {0x10de, 0x1002, 0x8086, 0x0000, 0xffff}) {
    if (std::optional<std::string> name = ids.VendorName(vendor)) {
      CheckName(*name);
    }
    for (uint16_t device : {0x20b0, 0x2330, 0x7408, 0x0000, 0xffff}) {
      if (std::optional<std::string> name = ids.DeviceName(vendor, device)) {
        CheckName(*name);
      }
    }
  }
  // The input as a model name: its type is well formed too.
  const std::string model(input.substr(0, 256));
  (void)gantry::IsUnnamedGpuModel(model);
  const std::string type = gantry::GpuTypeOf(model);
  for (char c : type) {
    Check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'),
          "type of any text is lower-case letters and digits");
  }
  return 0;
}
