#include "common/config_file.h"

#include <toml++/toml.h>

#include <filesystem>

#include "absl/strings/str_cat.h"

namespace gantry {

absl::StatusOr<std::vector<std::string>> ConfigFileToFlags(
    const std::string& path, const std::set<std::string>& known_keys) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(
        absl::StrCat("config file ", path, " not found"));
  }
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ":", e.source().begin.line, ":", e.source().begin.column, ": ",
        std::string(e.description())));
  }
  std::vector<std::string> flags;
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    const auto line = node.source().begin.line;
    if (!known_keys.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line, ": unknown key \"", name, "\""));
    }
    std::string value;
    if (auto s = node.value<std::string>(); s && node.is_string()) {
      value = *s;
    } else if (node.is_integer()) {
      value = absl::StrCat(*node.value<int64_t>());
    } else if (node.is_floating_point()) {
      value = absl::StrCat(*node.value<double>());
    } else if (node.is_boolean()) {
      value = *node.value<bool>() ? "true" : "false";
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line, ": key \"", name,
                       "\" must be a string, number or boolean"));
    }
    flags.push_back(absl::StrCat("--", name, "=", value));
  }
  return flags;
}

}  // namespace gantry
