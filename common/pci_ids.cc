#include "common/pci_ids.h"

#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text_file.h"

namespace gantry {
namespace {

// Four hex digits at the start of `text`, then at least one blank.
std::optional<uint16_t> LeadingId(std::string_view text) {
  if (text.size() < 5 || (text[4] != ' ' && text[4] != '\t')) {
    return std::nullopt;
  }
  for (size_t i = 0; i < 4; ++i) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(text[i]))) {
      return std::nullopt;
    }
  }
  uint32_t id = 0;
  if (!absl::SimpleHexAtoi(absl::string_view(text.data(), 4), &id)) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(id);
}

// The name after the id: blanks around it dropped; none when empty.
std::optional<std::string> NameAfterId(std::string_view text) {
  std::string_view name = text.substr(4);
  const auto blank = [](char c) {
    return absl::ascii_isspace(static_cast<unsigned char>(c));
  };
  while (!name.empty() && blank(name.front())) name.remove_prefix(1);
  while (!name.empty() && blank(name.back())) name.remove_suffix(1);
  if (name.empty()) return std::nullopt;
  return std::string(name);
}

}  // namespace

PciIds PciIds::Parse(std::string_view text, std::string source) {
  PciIds ids;
  ids.source_ = std::move(source);
  int32_t vendor = -1;  // the vendor whose devices follow; -1: none
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view()
                                             : text.substr(newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    if (line.front() != '\t') {
      // A vendor, or anything else at the margin (a class "C 03  Display
      // controller", a damaged line): what follows belongs to it, not to
      // the vendor before.
      vendor = -1;
      const std::optional<uint16_t> id = LeadingId(line);
      if (!id.has_value()) continue;
      if (std::optional<std::string> name = NameAfterId(line)) {
        vendor = *id;
        ids.vendors_.try_emplace(*id, std::move(*name));
      }
      continue;
    }
    if (vendor < 0 || (line.size() > 1 && line[1] == '\t')) {
      continue;  // a subsystem line, or a device of no known vendor
    }
    const std::string_view entry = line.substr(1);
    const std::optional<uint16_t> device = LeadingId(entry);
    if (!device.has_value()) continue;
    if (std::optional<std::string> name = NameAfterId(entry)) {
      ids.devices_.try_emplace(static_cast<uint32_t>(vendor) << 16 | *device,
                               std::move(*name));
    }
  }
  return ids;
}

absl::StatusOr<PciIds> PciIds::Load(const std::string& path) {
  if (absl::Status file =
          CheckNotDirectory(path, "PCI ID database", "a pci.ids file");
      !file.ok()) {
    return file;
  }
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return Parse(*text, path);
}

absl::StatusOr<PciIds> PciIds::LoadFirst(
    const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    return Load(path);
  }
  return absl::NotFoundError(absl::StrCat("no PCI ID database (pci.ids) at ",
                                          absl::StrJoin(paths, ", ")));
}

absl::StatusOr<PciIds> PciIds::LoadConfigured(const std::string& path) {
  return path.empty() ? LoadFirst(SystemPaths()) : Load(path);
}

std::vector<std::string> PciIds::SystemPaths() {
  return {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids",
          "/usr/share/pci.ids"};
}

std::optional<std::string> PciIds::DeviceName(uint16_t vendor,
                                              uint16_t device) const {
  auto it = devices_.find(uint32_t{vendor} << 16 | device);
  if (it == devices_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> PciIds::VendorName(uint16_t vendor) const {
  auto it = vendors_.find(vendor);
  if (it == vendors_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gantry
