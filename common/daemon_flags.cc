#include "common/daemon_flags.h"

#include <algorithm>
#include <iostream>
#include <set>
#include <vector>

#include "common/config_file.h"

namespace gantry {

namespace {

// Flags that are not settings, so not keys of the file.
bool IsFileKey(const std::string& name) {
  return !name.empty() && name != "help" && name != "config" &&
         name != "check-config";
}

}  // namespace

std::optional<int> ParseDaemonFlags(CLI::App& app, int argc, char** argv,
                                    const std::string& program,
                                    const std::string& table) {
  // Parsing words rather than argv leaves the name unset: --help and the
  // man pages made from it would say "Usage: [OPTIONS]".
  if (app.get_name().empty()) app.name(program);
  bool check_config = false;
  app.add_flag("--check-config", check_config,
               "Check the command line and the --config file (keys, types, "
               "ranges), then exit: 0 if both are good");
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
      if (IsFileKey(name)) keys.insert(name);
    }
    absl::StatusOr<std::vector<ConfigFlag>> from_file =
        ConfigFileToFlags(config, table, keys);
    if (!from_file.ok()) {
      std::cerr << program << ": " << from_file.status().message() << "\n";
      return 2;
    }
    // Each value alone through the flag parser first, so a bad one (a
    // string for a number, a value out of range) is reported with its key
    // and line rather than as an anonymous flag. The full parse below
    // sets every value again.
    for (const ConfigFlag& flag : *from_file) {
      std::vector<std::string> single(flag.words.rbegin(), flag.words.rend());
      try {
        app.parse(single);
      } catch (const CLI::ParseError& e) {
        std::cerr << program << ": " << config << ":" << flag.line << ": key \""
                  << flag.key << "\" in [" << table << "]: " << e.what()
                  << "\n";
        return 2;
      }
      words.insert(words.end(), flag.words.begin(), flag.words.end());
    }
  }
  for (int i = 1; i < argc; ++i) words.emplace_back(argv[i]);
  std::reverse(words.begin(), words.end());  // CLI11 takes them reversed
  try {
    app.parse(words);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); its own codes for errors
    // (105 for a value out of range, ...) become the one documented above.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (check_config) {
    std::cout << program << ": configuration OK"
              << (config.empty() ? " (no --config file)" : "") << "\n";
    return 0;
  }
  return std::nullopt;
}

}  // namespace gantry
