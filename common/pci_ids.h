// The PCI ID database (pci.ids, as pciutils, hwloc and lspci read it):
// vendor and device names by their numeric ids. The agent names a GPU from
// it when hwloc knows the device only by its ids (an XML written on a host
// without pci.ids, or a build of hwloc that does not look names up).
//
// The format, one entry a line ('#' starts a comment):
//   vvvv  Vendor name
//   \tdddd  Device name
//   \t\tssss ssss  Subsystem name
//   C cc  Class name           (the class list at the end; its indented
//   \tss  Subclass name         lines are no devices)
// Lines that fit none of these are skipped: the file belongs to the
// system, not to a user, but a damaged one must not stop an agent.
//
// A PciIds is immutable once built: const methods are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

class PciIds {
 public:
  // Names nothing.
  PciIds() = default;

  // The names in pci.ids-format text. `source` says where it came from.
  static PciIds Parse(std::string_view text, std::string source = "");

  // The file at `path`. Errors: NOT_FOUND when it does not exist,
  // INVALID_ARGUMENT when it cannot be read (a directory, no permission).
  static absl::StatusOr<PciIds> Load(const std::string& path);

  // The first of `paths` that exists, loaded. NOT_FOUND naming them all
  // when none does; a read error of the first that exists otherwise.
  static absl::StatusOr<PciIds> LoadFirst(
      const std::vector<std::string>& paths);

  // `path` as a --pci-ids flag gives it: that file, or the first of
  // SystemPaths() when it is empty.
  static absl::StatusOr<PciIds> LoadConfigured(const std::string& path);

  // Where distributions install the database: Debian's pci.ids package
  // (/usr/share/misc), hwdata (/usr/share/hwdata), then /usr/share.
  static std::vector<std::string> SystemPaths();

  // The device's name as the file gives it ("GA100 [A100 SXM4 40GB]"),
  // none when the file lacks the vendor or the device.
  std::optional<std::string> DeviceName(uint16_t vendor, uint16_t device) const;
  std::optional<std::string> VendorName(uint16_t vendor) const;

  size_t device_count() const { return devices_.size(); }
  // The path it was loaded from ("" for parsed text or none).
  const std::string& source() const { return source_; }

 private:
  std::unordered_map<uint32_t, std::string> devices_;  // vendor << 16 | device
  std::unordered_map<uint16_t, std::string> vendors_;
  std::string source_;
};

}  // namespace gantry
