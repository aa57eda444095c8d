// `gantry cache`: the datasets the nodes' caches hold (--dataset), a
// prefetch of one onto nodes, and an eviction:
//   gantry cache [list] [--nodes=HOSTLIST] [--user=NAME] [--dataset=NAME]
//   gantry cache prefetch NAME:PATH --nodes=HOSTLIST [--no-wait]
//   gantry cache evict NAME [--nodes=HOSTLIST] [--user=NAME] [--no-wait]
// Each returns the process exit code and prints errors as
// "gantry cache: error: ...".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gantry::cli {

// What the subcommands parse into; must outlive the parse.
struct CacheCommands {
  CLI::App* cache = nullptr;
  CLI::App* list = nullptr;
  CLI::App* prefetch = nullptr;
  CLI::App* evict = nullptr;
  std::vector<std::string> nodes;  // hostlists
  std::string user;
  std::string dataset;  // list: NAME; prefetch: NAME:PATH; evict: NAME
  bool json = false;
  bool no_wait = false;
  uint32_t timeout_seconds = 3600;
};

void AddCacheCommands(CLI::App& app, CacheCommands& commands);

// The exit code of the cache command parsed; nullopt when it was not.
std::optional<int> RunCacheCommands(const std::string& controller,
                                    const CacheCommands& commands);

}  // namespace gantry::cli
