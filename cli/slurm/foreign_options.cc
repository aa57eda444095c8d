#include "cli/slurm/foreign_options.h"

#include "absl/strings/str_cat.h"

namespace gantry::cli {
namespace {

struct ForeignOption {
  const char* command;  // gantry subcommand
  char short_name;      // 0: none
  const char* long_name;
  bool takes_value;
  bool error;       // refuse: leaving it out would change the answer
  const char* why;  // after "--name: "
};

constexpr char kOneCluster[] = "ignored: Gantry answers for its one cluster";
constexpr char kNoFederation[] = "ignored: Gantry has no federation";
constexpr char kNoEffect[] = "ignored: it changes nothing here";

constexpr ForeignOption kOptions[] = {
    {"queue", 'M', "clusters", true, false, kOneCluster},
    {"queue", 0, "federation", false, false, kNoFederation},
    {"queue", 0, "local", false, false, kNoFederation},
    {"queue", 0, "sibling", false, false, kNoFederation},
    {"queue", 0, "hide", false, false,
     "ignored: Gantry has no hidden partitions"},
    {"queue", 0, "noconvert", false, false, kNoEffect},
    {"queue", 'P', "priority", false, false,
     "ignored: a Gantry job is queued in one partition, so it has one line"},
    {"queue", 0, "array-unique", false, false,
     "ignored: use -r/--array for one line per array task"},
    {"queue", 'L', "licenses", true, true,
     "Gantry has no licenses, so no job would match"},
    {"queue", 'R', "reservation", true, true,
     "Gantry has no advance reservations, so no job would match"},
    {"queue", 0, "yaml", false, true, "not supported: use --json"},
    {"nodes", 'M', "clusters", true, false, kOneCluster},
    {"nodes", 0, "federation", false, false, kNoFederation},
    {"nodes", 0, "local", false, false, kNoFederation},
    {"nodes", 'a', "all", false, false,
     "ignored: Gantry has no hidden partitions"},
    {"nodes", 0, "hide", false, false,
     "ignored: Gantry has no hidden partitions"},
    {"nodes", 'e', "exact", false, false,
     "ignored: nodes already share a line only when every field printed "
     "matches"},
    {"nodes", 0, "noconvert", false, false, kNoEffect},
    {"nodes", 'v', "verbose", false, false, kNoEffect},
    {"nodes", 'T', "reservation", false, true,
     "Gantry has no advance reservations to list"},
    {"nodes", 'S', "sort", true, true,
     "not supported: partitions come in configured order, busier states "
     "first (-N: by node name)"},
    {"nodes", 0, "yaml", false, true, "not supported: use --json"},
    {"cancel", 'M', "clusters", true, false, kOneCluster},
    {"cancel", 0, "sibling", true, false, kNoFederation},
    {"cancel", 0, "ctld", false, false,
     "ignored: every request goes to gantryd already"},
    {"cancel", 'H', "hurry", false, false, kNoEffect},
    {"cancel", 'R', "reservation", true, true,
     "Gantry has no advance reservations, so no job would match"},
    {"cancel", 0, "wckey", true, true,
     "Gantry has no workload keys, so no job would match"},
};

// The option `word` names, and whether its value is inside the word.
const ForeignOption* Match(std::string_view command, const std::string& word,
                           bool& inline_value) {
  for (const ForeignOption& option : kOptions) {
    if (command != option.command) continue;
    const std::string long_form = absl::StrCat("--", option.long_name);
    if (word == long_form) {
      inline_value = false;
      return &option;
    }
    if (option.takes_value && word.rfind(long_form + "=", 0) == 0) {
      inline_value = true;
      return &option;
    }
    if (option.short_name != 0 && word.size() >= 2 && word[0] == '-' &&
        word[1] == option.short_name &&
        (word.size() == 2 || option.takes_value)) {
      inline_value = word.size() > 2;
      return &option;
    }
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> TakeForeignOptions(
    std::string_view command, const std::vector<std::string>& args,
    std::vector<std::string>& warnings) {
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      kept.insert(kept.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    bool inline_value = false;
    const ForeignOption* option = Match(command, word, inline_value);
    if (option == nullptr) {
      kept.push_back(word);
      continue;
    }
    const std::string name =
        option->short_name != 0 && word[1] != '-'
            ? absl::StrCat("-", std::string(1, option->short_name), "/--",
                           option->long_name)
            : absl::StrCat("--", option->long_name);
    if (option->takes_value && !inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat(name, " needs a value"));
      }
      ++i;
    }
    if (option->error) {
      return absl::UnimplementedError(absl::StrCat(name, ": ", option->why));
    }
    warnings.push_back(absl::StrCat("warning: ", name, " ", option->why));
  }
  return kept;
}

}  // namespace gantry::cli
