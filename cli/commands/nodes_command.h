// `gantry nodes` (sinfo, and scontrol show node): the partitions and
// nodes, as tables, sinfo -o/-O formats, whole records or JSON. Returns the
// process exit code and prints errors as "gantry nodes: error: ...".
// SINFO_FORMAT stands for -o when neither -o nor -O is given.
#pragma once

#include <string>
#include <vector>

#include "cli/command_table.h"

namespace gantry::cli {

// sinfo: the partition summary, or with `per_node` one line per node
// (sinfo -N); `node` non-empty: that node's whole record (scontrol show
// node); `detail`: that record for every node.
struct NodesOptions {
  std::string node;
  bool per_node = false;
  bool detail = false;
  std::vector<std::string> partitions;
  std::vector<std::string> states;
  bool no_header = false;
  bool json = false;
  std::string format;              // sinfo -o; empty: the default views
  std::string fields;              // sinfo -O names
  std::vector<std::string> nodes;  // -n: hostlists
  bool list_reasons = false;       // -R
  bool summarize = false;          // -s
  bool long_format = false;        // -l
  // Run as sinfo: -N in sinfo's layout rather than Gantry's inventory
  // table (GPUs, HCAs, leaf switches).
  bool slurm_layout = false;
  int iterate_seconds = 0;  // -i
  bool responding = false;  // -r
  bool dead = false;        // -d
};

int RunNodesCommand(const std::string& controller, const NodesOptions& options);

// Adds `gantry nodes` (sinfo, scontrol show node) and its options to the
// command table.
void AddNodesCommand(CommandTable& commands);

}  // namespace gantry::cli
