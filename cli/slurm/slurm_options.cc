#include "cli/slurm/slurm_options.h"

#include "absl/strings/str_cat.h"
#include "common/edit_distance.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

const SlurmOption* FindLong(const std::vector<SlurmOption>& table,
                            std::string_view name) {
  for (const SlurmOption& option : table) {
    if (name == option.long_name) return &option;
  }
  return nullptr;
}

const SlurmOption* FindShort(const std::vector<SlurmOption>& table, char c) {
  for (const SlurmOption& option : table) {
    if (option.short_name == c && c != 0) return &option;
  }
  return nullptr;
}

absl::Status Unknown(std::string_view program,
                     const std::vector<SlurmOption>& table,
                     std::string_view word) {
  const std::string_view name = word.substr(word.find_first_not_of('-'));
  std::string message = absl::StrCat(AsAbsl(program), ": unknown option ",
                                     AsAbsl(word.substr(0, 80)));
  constexpr size_t kMaxDistance = 2;
  size_t best_distance = kMaxDistance + 1;
  const char* best = nullptr;
  for (const SlurmOption& option : table) {
    const size_t distance = EditDistance(name.substr(0, name.find('=')),
                                         option.long_name, kMaxDistance);
    if (distance < best_distance) {
      best_distance = distance;
      best = option.long_name;
    }
  }
  if (best != nullptr)
    absl::StrAppend(&message, " (did you mean --", best, "?)");
  absl::StrAppend(&message, "; ", AsAbsl(program), " --help lists the options");
  return absl::InvalidArgumentError(message);
}

absl::Status NeedsValue(std::string_view program, const SlurmOption& option) {
  return absl::InvalidArgumentError(absl::StrCat(
      AsAbsl(program), ": option --", option.long_name, " needs a value"));
}

}  // namespace

bool ParsedOptions::Has(std::string_view long_name) const {
  for (const auto& [name, value] : options) {
    if (name == long_name) return true;
  }
  return false;
}

std::vector<std::string> ParsedOptions::Values(
    std::string_view long_name) const {
  std::vector<std::string> values;
  for (const auto& [name, value] : options) {
    if (name == long_name) values.push_back(value);
  }
  return values;
}

std::string ParsedOptions::Last(std::string_view long_name) const {
  std::string last;
  for (const auto& [name, value] : options) {
    if (name == long_name) last = value;
  }
  return last;
}

absl::StatusOr<ParsedOptions> ParseSlurmOptions(
    std::string_view program, const std::vector<SlurmOption>& table,
    const std::vector<std::string>& args) {
  ParsedOptions parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1,
                               args.end());
      break;
    }
    if (word.size() > 2 && word[0] == '-' && word[1] == '-') {
      const size_t equals = word.find('=');
      const std::string name = word.substr(2, equals - 2);
      const SlurmOption* option = FindLong(table, name);
      if (option == nullptr) return Unknown(program, table, word);
      if (!option->takes_value) {
        if (equals != std::string::npos) {
          return absl::InvalidArgumentError(absl::StrCat(
              AsAbsl(program), ": option --", name, " takes no value"));
        }
        parsed.options.emplace_back(name, "");
      } else if (equals != std::string::npos) {
        parsed.options.emplace_back(name, word.substr(equals + 1));
      } else if (i + 1 < args.size()) {
        parsed.options.emplace_back(name, args[++i]);
      } else {
        return NeedsValue(program, *option);
      }
      continue;
    }
    if (word.size() >= 2 && word[0] == '-' && word != "-") {
      // Bundled flags (-nP); a value-taking letter takes the rest.
      for (size_t j = 1; j < word.size(); ++j) {
        const SlurmOption* option = FindShort(table, word[j]);
        if (option == nullptr) {
          return Unknown(program, table, absl::StrCat("-", word.substr(j, 1)));
        }
        if (!option->takes_value) {
          parsed.options.emplace_back(option->long_name, "");
          continue;
        }
        if (j + 1 < word.size()) {
          std::string value = word.substr(j + 1);
          if (!value.empty() && value[0] == '=') value.erase(0, 1);
          parsed.options.emplace_back(option->long_name, value);
        } else if (i + 1 < args.size()) {
          parsed.options.emplace_back(option->long_name, args[++i]);
        } else {
          return NeedsValue(program, *option);
        }
        break;
      }
      continue;
    }
    parsed.positional.push_back(word);
  }
  return parsed;
}

}  // namespace gantry::cli
