// gantry-fleet: many simulated nodes in one process, for scale tests of
// gantryd (simulated_fleet.h). A binary of its own so that the production
// agent carries none of it; it reads the [fleet] table of --config.
#include <iostream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "absl/strings/str_join.h"
#include "agent/discovery/host_address.h"
#include "agent/discovery/node_inventory.h"
#include "agent/simulated/simulated_fleet.h"
#include "common/controller_targets.h"
#include "common/daemon_start.h"
#include "common/log.h"
#include "common/node_constraint.h"
#include "common/systemd_notify.h"

namespace {

// The inventory every node of the fleet reports: the synthetic node, or an
// hwloc XML file named by --topology.
absl::StatusOr<gantry::v1::NodeInventory> FleetInventory(
    const std::string& topology, const std::string& pci_ids_path) {
  if (topology.empty()) return gantry::agent::SyntheticNodeInventory();
  const absl::StatusOr<gantry::PciIds> pci_ids =
      gantry::PciIds::LoadConfigured(pci_ids_path);
  const gantry::PciIds none;
  return gantry::agent::DiscoverFromHwlocXml(topology,
                                             pci_ids.ok() ? *pci_ids : none);
}

}  // namespace

int main(int argc, char** argv) {
  if (std::optional<int> exit_code = gantry::BeginDaemon("gantry-fleet", {})) {
    return *exit_code;
  }
  gantry::DaemonCommandLine command_line(
      "gantry-fleet", "fleet",
      "gantry-fleet: many simulated Gantry nodes in one process, for scale "
      "tests of gantryd. Each node has its own stream to gantryd and its own "
      "name (--prefix), and shows as simulated in gantry nodes; its ranks "
      "start no process: each lasts the job's GANTRY_SIMULATED_SECONDS "
      "(\"inf\": until killed) and exits with its GANTRY_SIMULATED_EXIT_CODE, "
      "else the --rank-seconds and --exit-code defaults.");
  CLI::App& app = command_line.app();
  gantry::agent::SimulatedFleetOptions fleet;
  fleet.controller = "127.0.0.1:6817";
  std::string features;
  std::string topology;
  std::string pci_ids_path;
  double rank_seconds = 10;
  // Checked after Parse rather than marked required, so that
  // --check-config reads a file without it.
  app.add_option("--nodes", fleet.nodes,
                 "How many simulated nodes to host (required)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--controller", fleet.controller,
                 "gantryd address: HOST:PORT or unix:PATH (several, comma "
                 "separated, with HA: the fleet follows the leader)")
      ->capture_default_str();
  app.add_option("--munge-socket", fleet.munge_socket,
                 "munged's socket, for the credential each node's stream "
                 "carries as a real agent's does (empty: MUNGE's default)");
  app.add_option("--address", fleet.address,
                 "MASTER_ADDR of jobs whose first node is simulated (default: "
                 "this machine's first non-loopback IPv4)");
  app.add_option("--features", features,
                 "Features every simulated node declares, comma separated "
                 "(Slurm's NodeName Features=): what jobs select with "
                 "--constraint");
  app.add_option("--prefix", fleet.name_prefix,
                 "Simulated nodes are named PREFIX plus a zero-padded index "
                 "of at least 5 digits: sim00001, sim00002, ...")
      ->capture_default_str();
  app.add_option("--first", fleet.first_index,
                 "Index of the first simulated node (several fleets on one "
                 "controller take disjoint ranges)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000000));
  app.add_option("--topology", topology,
                 "hwloc XML topology every simulated node reports (default: "
                 "a fixed synthetic node: 1 socket, 16 cores, 32 CPUs, "
                 "128 GiB, 8 GPUs, no HCAs)")
      ->check(CLI::ExistingFile);
  app.add_option("--pci-ids", pci_ids_path,
                 "PCI ID database (pci.ids) that names the GPUs of --topology "
                 "(default: the first of " +
                     absl::StrJoin(gantry::PciIds::SystemPaths(), ", ") + ")");
  app.add_option("--rank-seconds", rank_seconds,
                 "How long a simulated rank runs when its job does not set "
                 "GANTRY_SIMULATED_SECONDS")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--exit-code", fleet.rank_defaults.exit_code,
                 "Exit code of a simulated rank when its job does not set "
                 "GANTRY_SIMULATED_EXIT_CODE")
      ->capture_default_str()
      ->check(CLI::Range(0, 255));
  app.add_option("--preflight", fleet.preflight_plan_path,
                 "File saying which simulated nodes fail, are slow in or "
                 "never answer pre-flight gang checks (NAME fail [WHY], NAME "
                 "slow, NAME silent per line), read at every check (empty: "
                 "all pass)");
  app.add_option("--preflight-ms", fleet.preflight_ms,
                 "Milliseconds a simulated node takes to answer a pre-flight "
                 "check")
      ->capture_default_str()
      ->check(CLI::Range(0, 600000));
  app.add_option("--threads", fleet.threads,
                 "Threads serving the simulated nodes (each drives its share "
                 "of the streams asynchronously)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--nodes-per-connection", fleet.nodes_per_connection,
                 "Simulated nodes whose streams share one TCP connection to "
                 "gantryd (1: a connection per node, as real agents have)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  if (std::optional<int> exit_code = command_line.Parse(argc, argv)) {
    return *exit_code;
  }
  if (fleet.nodes == 0) {
    std::cerr << "gantry-fleet: --nodes is required: how many simulated "
                 "nodes to host\n";
    return 2;
  }
  // Several controllers: follow a hand-over quickly, as the agent does
  // (agent/main.cc says why not with one).
  if (gantry::SplitControllerTargets(fleet.controller).size() > 1) {
    gantry::PollReconnectsOften();
  }
  if (fleet.address.empty()) {
    fleet.address = gantry::agent::FirstNonLoopbackAddress();
  }
  absl::StatusOr<std::vector<std::string>> parsed_features =
      gantry::ParseFeatureList(features);
  if (!parsed_features.ok()) {
    std::cerr << "gantry-fleet: --features: "
              << parsed_features.status().message() << "\n";
    return 2;
  }
  fleet.features = *parsed_features;
  fleet.rank_defaults.duration_ms =
      gantry::agent::SimulatedDurationMs(rank_seconds);
  if (absl::Status valid = gantry::agent::CheckSimulatedFleetOptions(fleet);
      !valid.ok()) {
    std::cerr << "gantry-fleet: " << valid.message() << "\n";
    return 2;
  }
  absl::StatusOr<gantry::v1::NodeInventory> inventory =
      FleetInventory(topology, pci_ids_path);
  if (!inventory.ok()) {
    gantry::log::Error("reading --topology failed",
                       {{"error", inventory.status().ToString()}});
    return 1;
  }
  // Before any thread: each inherits the mask.
  const sigset_t stop_signals = gantry::BlockStopSignals();
  gantry::agent::SimulatedFleet simulated(std::move(fleet),
                                          std::move(*inventory));
  std::thread runner([&simulated] { simulated.Run(); });
  gantry::systemd::NotifyReady("simulated fleet");
  gantry::WaitForStopSignal(stop_signals);
  simulated.Stop();
  runner.join();
  return 0;
}
