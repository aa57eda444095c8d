#include "common/daemon_flags.h"

#include <algorithm>
#include <iostream>
#include <set>
#include <vector>

#include "common/config_file.h"

namespace gantry {

std::optional<int> ParseDaemonFlags(CLI::App& app, int argc, char** argv,
                                    const std::string& program) {
  // The file is read before the command line is parsed, so find --config
  // (either form) by hand first.
  std::string config;
  for (int i = 1; i < argc; ++i) {
    const std::string word(argv[i]);
    if (word == "--config" && i + 1 < argc) config = argv[i + 1];
    if (word.rfind("--config=", 0) == 0) config = word.substr(9);
  }
  std::vector<std::string> words;
  if (!config.empty()) {
    std::set<std::string> keys;
    for (const CLI::Option* option : app.get_options()) {
      std::string name = option->get_single_name();
      if (!name.empty() && name != "help" && name != "config") {
        keys.insert(name);
      }
    }
    absl::StatusOr<std::vector<std::string>> from_file =
        ConfigFileToFlags(config, keys);
    if (!from_file.ok()) {
      std::cerr << program << ": " << from_file.status().message() << "\n";
      return 2;
    }
    words = *from_file;
  }
  for (int i = 1; i < argc; ++i) words.emplace_back(argv[i]);
  std::reverse(words.begin(), words.end());  // CLI11 takes them reversed
  try {
    app.parse(words);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return std::nullopt;
}

}  // namespace gantry
