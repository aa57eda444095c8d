#include "common/config_file.h"

#include <toml++/toml.h>

#include <filesystem>

#include "absl/strings/str_cat.h"

namespace gantry {

namespace {

absl::StatusOr<std::string> ScalarText(const toml::node& node) {
  if (node.is_string()) return *node.value<std::string>();
  if (node.is_integer()) return absl::StrCat(*node.value<int64_t>());
  if (node.is_floating_point()) return absl::StrCat(*node.value<double>());
  if (node.is_boolean())
    return std::string(*node.value<bool>() ? "true" : "false");
  return absl::InvalidArgumentError(
      "must be a string, number or boolean (or a list of them)");
}

}  // namespace

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
    // A list gives the flag once per element (repeatable flags such as
    // the agent's --network-role).
    std::vector<const toml::node*> values;
    if (const toml::array* list = node.as_array()) {
      for (const toml::node& element : *list) values.push_back(&element);
    } else {
      values.push_back(&node);
    }
    for (const toml::node* element : values) {
      absl::StatusOr<std::string> value = ScalarText(*element);
      if (!value.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ":", line, ": key \"", name, "\" ",
                         value.status().message()));
      }
      flags.push_back(absl::StrCat("--", name, "=", *value));
    }
  }
  return flags;
}

}  // namespace gantry
