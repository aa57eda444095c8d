// libFuzzer target for the Slurm topology.conf reader, which reads an
// administrator's file (and whatever a configuration tool wrote).
//
// Beyond "no crash": every error names the file and line; an accepted tree
// answers its queries consistently (each node has a leaf switch, is at
// distance 0 from itself and lies under every root that reaches it), and
// written back as topology.conf it reads the same again.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/hostlist.h"
#include "common/slurm_topology_parser.h"
#include "common/topology.h"

namespace {

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "check failed: %s\n", what);
    std::abort();
  }
}

// Names that survive being written unquoted into a Key=Value word.
bool Plain(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string Write(const gantry::Topology& t, bool* plain) {
  std::string out;
  for (const gantry::Topology::Switch& s : t.switches()) {
    *plain &= Plain(s.name);
    out += "SwitchName=" + s.name;
    if (!s.children.empty()) {
      out += " Switches=";
      for (size_t i = 0; i < s.children.size(); ++i) {
        *plain &= Plain(s.children[i].name);
        out += (i ? "," : "") + s.children[i].name;
      }
    } else {
      for (const std::string& node : s.nodes) *plain &= Plain(node);
      out += " Nodes=" + gantry::CompressHostlist(s.nodes);
    }
    out += " LinkSpeed=" + std::to_string(s.link_speed) + "\n";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size > 8192) return 0;  // keeps each run in microseconds
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gantry::Topology> t =
      gantry::ParseSlurmTopology(input, "fuzz.conf");
  if (!t.ok()) {
    Check(std::string(t.status().message()).substr(0, 10) == "fuzz.conf:",
          "error names the file and line");
    return 0;
  }
  for (const std::string& node : t->nodes()) {
    Check(t->LeafSwitchOf(node).has_value(), "node has a leaf");
    Check(t->Distance(node, node) == 0, "distance to itself");
  }
  size_t under_roots = 0;
  for (const std::string& root : t->Roots()) {
    absl::StatusOr<std::vector<std::string>> under = t->NodesUnder(root);
    Check(under.ok(), "roots exist");
    under_roots += under->size();
  }
  // Slurm trees have one parent per switch unless a file says otherwise:
  // every node lies under at least one root.
  Check(under_roots >= t->nodes().size(), "every node under a root");
  (void)t->Describe();

  bool plain = true;
  const std::string again = Write(*t, &plain);
  if (!plain) return 0;
  absl::StatusOr<gantry::Topology> reread =
      gantry::ParseSlurmTopology(again, "again.conf");
  Check(reread.ok(), "written tree reads again");
  Check(reread->Describe() == t->Describe(), "round trip");
  return 0;
}
