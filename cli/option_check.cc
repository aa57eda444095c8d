#include "cli/option_check.h"

#include "absl/strings/str_cat.h"
#include "common/edit_distance.h"

namespace gantry::cli {
namespace {

const CLI::Option* Find(const CLI::App& app, const std::string& name) {
  for (const CLI::App* at = &app; at != nullptr; at = at->get_parent()) {
    if (const CLI::Option* option = at->get_option_no_throw(name)) {
      return option;
    }
  }
  return nullptr;
}

bool TakesValue(const CLI::Option& option) {
  return option.get_type_size_min() > 0 && option.get_expected_min() > 0;
}

// The long option closest to `name` (without dashes): "" when none is
// within two edits.
std::string Closest(const CLI::App& app, const std::string& name) {
  std::size_t best_distance = 3;
  std::string best;
  for (const CLI::App* at = &app; at != nullptr; at = at->get_parent()) {
    for (const CLI::Option* option : at->get_options()) {
      if (option->get_group().empty()) continue;  // hidden
      for (const std::string& long_name : option->get_lnames()) {
        const std::size_t distance = EditDistance(name, long_name, 2);
        if (distance < best_distance) {
          best_distance = distance;
          best = long_name;
        }
      }
    }
  }
  return best;
}

absl::Status Unrecognized(const std::string& program, const std::string& what,
                          const std::string& suggestion) {
  return absl::InvalidArgumentError(
      absl::StrCat(program, ": ", what,
                   suggestion.empty()
                       ? ""
                       : absl::StrCat(" (did you mean '--", suggestion, "'?)"),
                   "\nTry \"", program, " --help\" for more information"));
}

}  // namespace

absl::Status CheckOptions(const CLI::App& subcommand,
                          const std::vector<std::string>& args,
                          const std::string& program) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;
    if (word.size() < 2 || word[0] != '-') continue;
    if (word[1] == '-') {
      const std::size_t equals = word.find('=');
      const std::string name = word.substr(0, equals);
      const CLI::Option* option = Find(subcommand, name);
      if (option == nullptr) {
        return Unrecognized(program,
                            absl::StrCat("unrecognized option '", name, "'"),
                            Closest(subcommand, name.substr(2)));
      }
      if (equals == std::string::npos && TakesValue(*option)) ++i;
      continue;
    }
    // -x, -xVALUE, or bundled flags -hl.
    for (std::size_t at = 1; at < word.size(); ++at) {
      const CLI::Option* option = Find(subcommand, std::string{'-', word[at]});
      if (option == nullptr) {
        return Unrecognized(
            program,
            absl::StrCat("invalid option -- '", std::string(1, word[at]), "'"),
            "");
      }
      if (option->get_type_size_max() > 0 && option->get_expected_max() > 0) {
        // The rest of the word is its value, or else the next word (when
        // the value is not optional).
        if (at + 1 == word.size() && TakesValue(*option)) ++i;
        break;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace gantry::cli
