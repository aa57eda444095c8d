// gantry-topology-check: reads a switch tree the way the controller does and
// prints it, so that tests (and an administrator checking a file before
// deploying it) can see what Gantry makes of it.
//
//   gantry-topology-check --slurm topology.conf
//   gantry-topology-check --ibnetdiscover dump.out [--agent
//   NAME=GUID[,GUID]]...
//                         [--guids]
//
// Prints Topology::Describe(); for ibnetdiscover input also the hosts no
// agent serves, the agents the fabric does not know, hosts attached to no
// switch, the number of adapters inside switches and, with --guids, one
// "guid node" line per host adapter port. Exit status: 0 on success, 1 when
// the input is refused (the reason, with file and line, on stderr), 2 for a
// bad command line.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common/hostlist.h"
#include "common/ibnetdiscover_parser.h"
#include "common/slurm_topology_parser.h"
#include "common/topology.h"

namespace {

int Usage(const char* why) {
  std::fprintf(stderr,
               "gantry-topology-check: %s\n"
               "usage: gantry-topology-check --slurm FILE\n"
               "       gantry-topology-check --ibnetdiscover FILE "
               "[--agent NAME=GUID[,GUID]]... [--guids]\n",
               why);
  return 2;
}

int Refused(const absl::Status& status) {
  std::fprintf(stderr, "refused: %s\n", std::string(status.message()).c_str());
  return 1;
}

std::string List(const std::vector<std::string>& names) {
  return gantry::CompressHostlist(names);
}

}  // namespace

int main(int argc, char** argv) {
  std::string slurm;
  std::string ibnetdiscover;
  bool guids = false;
  std::vector<gantry::AgentHcas> agents;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--slurm" && has_value) {
      slurm = argv[++i];
    } else if (arg == "--ibnetdiscover" && has_value) {
      ibnetdiscover = argv[++i];
    } else if (arg == "--guids") {
      guids = true;
    } else if (arg == "--agent" && has_value) {
      const std::string_view spec = argv[++i];
      const size_t eq = spec.find('=');
      if (eq == 0 || eq == std::string_view::npos) {
        return Usage("--agent takes NAME=GUID[,GUID...]");
      }
      gantry::AgentHcas agent;
      agent.node = std::string(spec.substr(0, eq));
      std::string_view list = spec.substr(eq + 1);
      while (!list.empty()) {
        const size_t comma = list.find(',');
        const std::string_view one = list.substr(0, comma);
        absl::StatusOr<uint64_t> guid = gantry::ParseGuid(one);
        if (!guid.ok()) return Usage("bad GUID in --agent");
        agent.guids.push_back(*guid);
        list = comma == std::string_view::npos ? std::string_view()
                                               : list.substr(comma + 1);
      }
      agents.push_back(std::move(agent));
    } else {
      return Usage(("unexpected argument " + std::string(arg)).c_str());
    }
  }
  if (slurm.empty() == ibnetdiscover.empty()) {
    return Usage("give exactly one of --slurm and --ibnetdiscover");
  }

  if (!slurm.empty()) {
    absl::StatusOr<gantry::Topology> t = gantry::LoadSlurmTopologyFile(slurm);
    if (!t.ok()) return Refused(t.status());
    std::fputs(t->Describe().c_str(), stdout);
    return 0;
  }
  absl::StatusOr<gantry::Fabric> fabric =
      gantry::LoadIbnetdiscoverFile(ibnetdiscover);
  if (!fabric.ok()) return Refused(fabric.status());
  absl::StatusOr<gantry::FabricTopology> t =
      gantry::BuildFabricTopology(*fabric, agents);
  if (!t.ok()) return Refused(t.status());
  std::fputs(t->topology.Describe().c_str(), stdout);
  std::printf("unserved: %s\n", List(t->unserved).c_str());
  std::printf("unknown-agents: %s\n", List(t->unknown_agents).c_str());
  std::printf("detached: %s\n", List(t->detached).c_str());
  std::printf("switch-adapters: %zu\n", t->switch_adapters);
  if (guids) {
    for (const auto& [guid, node] : t->node_of_port_guid) {
      std::printf("guid %s %s\n", gantry::FormatGuid(guid).c_str(),
                  node.c_str());
    }
  }
  return 0;
}
