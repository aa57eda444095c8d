// `gantry nodes` (sinfo, and scontrol show node): the partitions and
// nodes, as tables, sinfo -o formats, whole records or JSON. Returns the
// process exit code and prints errors as "gantry nodes: error: ...".
#pragma once

#include <string>
#include <vector>

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
  std::string format;  // sinfo -o; empty: the default views
};

int RunNodesCommand(const std::string& controller, const NodesOptions& options);

}  // namespace gantry::cli
