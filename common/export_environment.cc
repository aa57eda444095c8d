#include "common/export_environment.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gantry {
namespace {

bool ValidName(const std::string& name) {
  if (name.empty() || absl::ascii_isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return false;
    }
  }
  return true;
}

struct ExportItem {
  std::string name;
  bool has_value = false;
  std::string value;
};

absl::StatusOr<std::vector<ExportItem>> Items(std::string_view spec, bool& all,
                                              bool& none) {
  all = false;
  none = false;
  std::vector<ExportItem> items;
  if (spec.empty()) {
    all = true;
    return items;
  }
  const std::vector<std::string> words =
      absl::StrSplit(std::string(spec), ',', absl::SkipEmpty());
  for (const std::string& item : words) {
    const std::string upper = absl::AsciiStrToUpper(item);
    if (upper == "ALL") {
      all = true;
      continue;
    }
    if (upper == "NONE" || upper == "NIL") {
      none = true;
      continue;
    }
    ExportItem parsed;
    const size_t equals = item.find('=');
    parsed.name = item.substr(0, equals);
    if (equals != std::string::npos) {
      parsed.has_value = true;
      parsed.value = item.substr(equals + 1);
    }
    if (!ValidName(parsed.name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--export: '", item,
          "' is not ALL, NONE, NAME or NAME=value (a name is letters, digits "
          "and _, not starting with a digit)"));
    }
    items.push_back(std::move(parsed));
  }
  if (all && none) {
    return absl::InvalidArgumentError(
        "--export: ALL and NONE contradict each other");
  }
  return items;
}

}  // namespace

absl::Status CheckExportSpec(std::string_view spec) {
  bool all = false, none = false;
  return Items(spec, all, none).status();
}

absl::StatusOr<std::map<std::string, std::string>> ExportedEnvironment(
    std::string_view spec,
    const std::map<std::string, std::string>& environment) {
  bool all = false, none = false;
  absl::StatusOr<std::vector<ExportItem>> items = Items(spec, all, none);
  if (!items.ok()) return items.status();
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : environment) {
    if (all || name.rfind("SLURM_", 0) == 0) out[name] = value;
  }
  for (const ExportItem& item : *items) {
    if (item.has_value) {
      out[item.name] = item.value;
    } else if (auto found = environment.find(item.name);
               found != environment.end()) {
      out[item.name] = found->second;
    }
  }
  return out;
}

}  // namespace gantry
