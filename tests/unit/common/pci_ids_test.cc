// The pci.ids reader: a small fixture written here, damaged lines, and the
// system's own database (Debian's pci.ids package) when it is installed.

#include "common/pci_ids.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "tests/unit/support/skip.h"

namespace gantry {
namespace pci_ids_test {

namespace fs = std::filesystem;
using namespace std::string_view_literals;

constexpr char kFixture[] =
    "#\n"
    "#\tList of PCI ID's (a fixture in the real file's layout)\n"
    "#\n"
    "# Syntax:\n"
    "# vendor  vendor_name\n"
    "#\tdevice  device_name\n"
    "#\t\tsubvendor subdevice  subsystem_name\n"
    "\n"
    "1002  Advanced Micro Devices, Inc. [AMD/ATI]\n"
    "\t740c  Aldebaran/MI200 [Instinct MI250X/MI250]\n"
    "\t\t1002 0b0c  Instinct MI250X\n"
    "10de  NVIDIA Corporation\n"
    "\t20b0  GA100 [A100 SXM4 40GB]\n"
    "\t\t10de 134f  A100-SXM4-40GB\n"
    "\t2330  GH100[H100 SXM5 80GB]\r\n"  // no blank before '[', CR-LF
    "\t1db5  GV100GL [Tesla V100 SXM2 32GB]   \n"
    "\tzzzz  not an id\n"
    "\t12  too short\n"
    "\t1234\n"  // no name
    "10df  Emulex Corporation\n"
    "# a comment between entries\n"
    "\tf100  Saturn-X: LightPulse Fibre Channel Host Adapter\n"
    "\n"
    "# List of known device classes\n"
    "C 03  Display controller\n"
    "\t00  VGA compatible controller\n"
    "\t\t00  VGA controller\n"
    "\t02  3D controller\n"
    "C 12  Processing accelerators\n"
    "\t00  Processing accelerators\n";

TEST_CASE("pci.ids text: vendors and devices by id, the rest skipped") {
  const PciIds ids = PciIds::Parse(kFixture, "fixture");
  CHECK(ids.source() == "fixture");
  CHECK(ids.DeviceName(0x10de, 0x20b0) == "GA100 [A100 SXM4 40GB]");
  CHECK(ids.DeviceName(0x10de, 0x2330) == "GH100[H100 SXM5 80GB]");
  CHECK(ids.DeviceName(0x10de, 0x1db5) == "GV100GL [Tesla V100 SXM2 32GB]");
  CHECK(ids.DeviceName(0x1002, 0x740c) ==
        "Aldebaran/MI200 [Instinct MI250X/MI250]");
  CHECK(ids.DeviceName(0x10df, 0xf100) ==
        "Saturn-X: LightPulse Fibre Channel Host Adapter");
  CHECK(ids.VendorName(0x10de) == "NVIDIA Corporation");
  CHECK(ids.VendorName(0x1002) == "Advanced Micro Devices, Inc. [AMD/ATI]");
  // Subsystems are not devices; a device id under one vendor is not
  // another's; class lines are not devices of the last vendor.
  CHECK_FALSE(ids.DeviceName(0x10de, 0x134f).has_value());
  CHECK_FALSE(ids.DeviceName(0x1002, 0x20b0).has_value());
  CHECK_FALSE(ids.DeviceName(0x10df, 0x0002).has_value());
  CHECK_FALSE(ids.DeviceName(0x10df, 0x0000).has_value());
  CHECK_FALSE(ids.DeviceName(0x10de, 0x1234).has_value());
  CHECK_FALSE(ids.VendorName(0x8086).has_value());
  CHECK(ids.device_count() == 5);
}

TEST_CASE("damaged pci.ids text names what it can and never fails") {
  const PciIds empty = PciIds::Parse("");
  CHECK(empty.device_count() == 0);
  CHECK_FALSE(empty.DeviceName(0x10de, 0x20b0).has_value());
  CHECK(PciIds().device_count() == 0);

  // Devices before any vendor, a vendor line without a name (its devices
  // then belong to none), a truncated last line, bytes that are no text.
  const PciIds damaged = PciIds::Parse(
      "\t20b0  orphan device\n"
      "10de\n"
      "\t20b1  device of a nameless vendor\n"
      "\xff\xfe\x00garbage\n"
      "1002  AMD\n"
      "\t\t\t\t\n"
      "\t7408  Aldebaran/MI200 [Instinct MI250X]\n"
      "\t74a1  Aqua Vanjaram [Instinct MI300X]"sv);
  CHECK_FALSE(damaged.DeviceName(0x10de, 0x20b0).has_value());
  CHECK_FALSE(damaged.DeviceName(0x10de, 0x20b1).has_value());
  CHECK(damaged.DeviceName(0x1002, 0x7408) ==
        "Aldebaran/MI200 [Instinct MI250X]");
  CHECK(damaged.DeviceName(0x1002, 0x74a1) ==
        "Aqua Vanjaram [Instinct MI300X]");
  CHECK(damaged.device_count() == 2);
}

TEST_CASE("loading pci.ids: a missing file, a directory, the first found") {
  const fs::path dir =
      fs::temp_directory_path() /
      ("gantry_pci_ids_test_" + std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(dir);
  const fs::path file = dir / "pci.ids";
  std::ofstream(file) << kFixture;

  CHECK(PciIds::Load((dir / "absent").string()).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(PciIds::Load(dir.string()).status().code() ==
        absl::StatusCode::kInvalidArgument);
  absl::StatusOr<PciIds> loaded = PciIds::Load(file.string());
  REQUIRE(loaded.ok());
  CHECK(loaded->source() == file.string());
  CHECK(loaded->DeviceName(0x10de, 0x20b0) == "GA100 [A100 SXM4 40GB]");

  absl::StatusOr<PciIds> first =
      PciIds::LoadFirst({(dir / "absent").string(), file.string()});
  REQUIRE(first.ok());
  CHECK(first->source() == file.string());
  const absl::StatusOr<PciIds> none =
      PciIds::LoadFirst({(dir / "a").string(), (dir / "b").string()});
  CHECK(none.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(none.status().message()).find((dir / "b").string()) !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("the system's pci.ids names the GPUs of real servers") {
  absl::StatusOr<PciIds> system = PciIds::LoadFirst(PciIds::SystemPaths());
  if (!system.ok()) {
    GANTRY_SKIP(system.status().message()
                << " (Debian: apt-get install pci.ids)");
  }
  INFO(system->source());
  CHECK(system->device_count() > 10000);
  CHECK(system->VendorName(0x10de) == "NVIDIA Corporation");
  // The GPUs of ../shared/data/hwloc, by the ids in those files.
  CHECK(system->DeviceName(0x10de, 0x20b0) == "GA100 [A100 SXM4 40GB]");
  CHECK(system->DeviceName(0x10de, 0x1db1) == "GV100GL [Tesla V100 SXM2 16GB]");
  CHECK(system->DeviceName(0x10de, 0x1eb8) == "TU104GL [Tesla T4]");
  CHECK(system->DeviceName(0x1002, 0x7408) ==
        "Aldebaran/MI200 [Instinct MI250X]");
}

}  // namespace pci_ids_test
}  // namespace gantry
