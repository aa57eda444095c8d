#include "daemon/scheduler/partition_config.h"

#include <cctype>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/hostlist.h"
#include "common/option_values.h"

namespace gantry {
namespace {

constexpr std::size_t kMaxNameBytes = 64;

absl::Status Invalid(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
        c != '.') {
      return false;
    }
  }
  return true;
}

bool IsUnlimited(const std::string& value) {
  const std::string upper = absl::AsciiStrToUpper(value);
  return upper == "UNLIMITED" || upper == "INFINITE";
}

absl::StatusOr<bool> ParseYesNo(const std::string& key,
                                const std::string& value) {
  const std::string upper = absl::AsciiStrToUpper(value);
  if (upper == "YES") return true;
  if (upper == "NO") return false;
  return Invalid(absl::StrCat(key, "=", value, ": expected YES or NO"));
}

absl::StatusOr<uint64_t> ParseTime(const std::string& key,
                                   const std::string& value) {
  absl::StatusOr<uint64_t> seconds = ParseTimeLimit(value);
  if (!seconds.ok()) {
    return Invalid(
        absl::StrCat(key, "=", value, ": ", seconds.status().message()));
  }
  return *seconds;
}

absl::Status ApplyKey(const std::string& key, const std::string& value,
                      PartitionConfig& partition) {
  const std::string lower = absl::AsciiStrToLower(key);
  if (value.empty()) return Invalid(absl::StrCat(key, "= needs a value"));
  if (lower == "nodes") {
    if (absl::AsciiStrToUpper(value) == "ALL") {
      partition.all_nodes = true;
      partition.nodes.clear();
      return absl::OkStatus();
    }
    absl::StatusOr<std::vector<std::string>> nodes = ExpandHostlist(value);
    if (!nodes.ok()) {
      return Invalid(
          absl::StrCat("Nodes=", value, ": ", nodes.status().message()));
    }
    partition.all_nodes = false;
    partition.nodes = {nodes->begin(), nodes->end()};
    return absl::OkStatus();
  }
  if (lower == "default") {
    absl::StatusOr<bool> yes = ParseYesNo(key, value);
    if (!yes.ok()) return yes.status();
    partition.is_default = *yes;
    return absl::OkStatus();
  }
  if (lower == "defaulttime" || lower == "maxtime") {
    absl::StatusOr<uint64_t> seconds = ParseTime(key, value);
    if (!seconds.ok()) return seconds.status();
    (lower == "maxtime" ? partition.max_time_seconds
                        : partition.default_time_seconds) = *seconds;
    return absl::OkStatus();
  }
  if (lower == "maxnodes") {
    if (IsUnlimited(value)) {
      partition.max_nodes = 0;
      return absl::OkStatus();
    }
    uint32_t count = 0;
    if (!absl::SimpleAtoi(value, &count) || count == 0) {
      return Invalid(absl::StrCat("MaxNodes=", value,
                                  ": expected a positive count or UNLIMITED"));
    }
    partition.max_nodes = count;
    return absl::OkStatus();
  }
  if (lower == "hotspares") {
    absl::StatusOr<std::vector<std::string>> nodes = ExpandHostlist(value);
    if (!nodes.ok()) {
      return Invalid(
          absl::StrCat("HotSpares=", value, ": ", nodes.status().message()));
    }
    partition.hot_spares = {nodes->begin(), nodes->end()};
    return absl::OkStatus();
  }
  if (lower == "state") {
    // Only UP: a partition that takes no jobs is better removed, and a
    // silently ignored DOWN would run jobs the admin meant to stop.
    if (absl::AsciiStrToUpper(value) == "UP") return absl::OkStatus();
    return Invalid(absl::StrCat("State=", value,
                                ": only State=UP is supported; drain the "
                                "nodes (gantry drain) to stop new work"));
  }
  return Invalid(absl::StrCat(
      "unknown key \"", key,
      "\" (known: Nodes, Default, DefaultTime, MaxTime, MaxNodes, HotSpares, "
      "State)"));
}

}  // namespace

absl::StatusOr<PartitionConfig> ParsePartitionLine(const std::string& line) {
  const std::vector<std::string> words =
      absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (words.empty()) return Invalid("empty partition definition");
  PartitionConfig partition;
  std::string name = words[0];
  const std::string prefix = "PartitionName=";
  if (absl::StartsWithIgnoreCase(name, prefix)) name.erase(0, prefix.size());
  if (!ValidName(name)) {
    return Invalid(absl::StrCat(
        "invalid partition name \"", name,
        "\" (letters, digits, '_', '-', '.'; at most 64 characters)"));
  }
  partition.name = std::string(name);
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::size_t equals = words[i].find('=');
    if (equals == std::string::npos) {
      return Invalid(absl::StrCat("partition ", partition.name, ": \"",
                                  words[i], "\" is not KEY=VALUE"));
    }
    absl::Status applied = ApplyKey(words[i].substr(0, equals),
                                    words[i].substr(equals + 1), partition);
    if (!applied.ok()) {
      return Invalid(
          absl::StrCat("partition ", partition.name, ": ", applied.message()));
    }
  }
  if (partition.max_time_seconds > 0 &&
      partition.default_time_seconds > partition.max_time_seconds) {
    return Invalid(absl::StrCat("partition ", partition.name,
                                ": DefaultTime is longer than MaxTime"));
  }
  for (const std::string& spare : partition.hot_spares) {
    if (!partition.Contains(spare)) {
      return Invalid(absl::StrCat("partition ", partition.name, ": hot spare ",
                                  spare, " is not one of its Nodes"));
    }
  }
  return partition;
}

absl::StatusOr<std::vector<PartitionConfig>> ParsePartitions(
    const std::vector<std::string>& lines) {
  if (lines.empty()) return Invalid("no partition defined");
  std::vector<PartitionConfig> partitions;
  std::set<std::string> names;
  const PartitionConfig* default_partition = nullptr;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    absl::StatusOr<PartitionConfig> partition = ParsePartitionLine(lines[i]);
    if (!partition.ok()) {
      return Invalid(absl::StrCat("--partition #", i + 1, ": ",
                                  partition.status().message()));
    }
    if (!names.insert(partition->name).second) {
      return Invalid(absl::StrCat("--partition #", i + 1, ": partition ",
                                  partition->name, " is defined twice"));
    }
    partitions.push_back(std::move(*partition));
  }
  for (const PartitionConfig& partition : partitions) {
    if (!partition.is_default) continue;
    if (default_partition != nullptr) {
      return Invalid(absl::StrCat("partitions ", default_partition->name,
                                  " and ", partition.name,
                                  " both say Default=YES"));
    }
    default_partition = &partition;
  }
  if (default_partition == nullptr) partitions.front().is_default = true;
  return partitions;
}

}  // namespace gantry
