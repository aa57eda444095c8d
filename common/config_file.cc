#include "common/config_file.h"

#include <toml++/toml.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

std::string TableList() {
  std::vector<std::string> names;
  for (const std::string& name : ConfigTables()) {
    names.push_back(absl::StrCat("[", name, "]"));
  }
  return absl::StrJoin(names, ", ");
}

absl::Status KeyError(const std::string& path, int line,
                      absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": ", text));
}

}  // namespace

const std::set<std::string>& ConfigTables() {
  static const std::set<std::string> tables = {"agent", "client", "controller",
                                               "fleet"};
  return tables;
}

absl::StatusOr<std::vector<ConfigFlag>> ConfigFileToFlags(
    const std::string& path, const std::string& table,
    const std::set<std::string>& known_keys) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(
        absl::StrCat("config file ", path, " not found"));
  }
  toml::table file;
  try {
    file = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ":", e.source().begin.line, ":", e.source().begin.column, ": ",
        std::string(e.description())));
  }
  // Every top-level entry is checked, not only ours, so that a key meant
  // for a table but written above it is caught by whichever daemon starts.
  const toml::table* own = nullptr;
  for (const auto& [key, node] : file) {
    const std::string name(key.str());
    const int line = static_cast<int>(node.source().begin.line);
    if (!node.is_table()) {
      return KeyError(path, line,
                      absl::StrCat("key \"", name,
                                   "\" is outside any table; put it under "
                                   "one of ",
                                   TableList()));
    }
    if (!ConfigTables().count(name)) {
      return KeyError(path, line,
                      absl::StrCat("unknown table [", name, "] (expected ",
                                   TableList(), ")"));
    }
    if (name == table) own = node.as_table();
  }
  std::vector<ConfigFlag> flags;
  if (own == nullptr) return flags;
  for (const auto& [key, node] : *own) {
    const std::string name(key.str());
    const int line = static_cast<int>(node.source().begin.line);
    if (!known_keys.count(name)) {
      return KeyError(
          path, line,
          absl::StrCat("unknown key \"", name, "\" in [", table, "]"));
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
        return KeyError(path, line,
                        absl::StrCat("key \"", name, "\" in [", table, "] ",
                                     value.status().message()));
      }
      flags.push_back(
          {name, line,
           value->empty()
               ? std::vector<std::string>{absl::StrCat("--", name), ""}
               : std::vector<std::string>{
                     absl::StrCat("--", name, "=", *value)}});
    }
  }
  return flags;
}

}  // namespace gantry
