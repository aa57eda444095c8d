// gantry-agent: parses flags (and the same keys from --config), discovers the
// node, and runs the agent until SIGINT/SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include <prometheus/registry.h>
#include <CLI/CLI.hpp>

#include "absl/strings/str_join.h"
#include "agent/agent.h"
#include "agent/agent_metrics.h"
#include "agent/datasets/dataset_stage_process.h"
#include "agent/discovery/host_address.h"
#include "agent/discovery/node_inventory.h"
#include "agent/discovery/verbs_discovery.h"
#include "common/controller_targets.h"
#include "common/crash_point.h"
#include "common/daemon_start.h"
#include "common/log.h"
#include "common/metrics_endpoint.h"
#include "common/network_roles.h"
#include "common/node_constraint.h"
#include "common/option_values.h"
#include "common/systemd_notify.h"
#include "common/tls_credentials.h"

int main(int argc, char** argv) {
  // Dataset helpers (below) get the same start: they write log lines too.
  if (std::optional<int> exit_code =
          gantry::BeginDaemon("gantry-agent", gantry::kAgentCrashPoints)) {
    return *exit_code;
  }
  // A dataset helper (agent/datasets/dataset_stage_process.h): the agent's
  // binary started again to read and write trees as a job's user.
  if (argc >= 2 &&
      std::string_view(argv[1]) == gantry::agent::kDatasetWorkerFlag) {
    return gantry::agent::RunDatasetWorker(
        std::vector<std::string>(argv + 2, argv + argc));
  }
  gantry::DaemonCommandLine command_line(
      "gantry-agent", "agent",
      "gantry-agent: the Gantry node agent. Discovers the node, registers "
      "with gantryd, and starts, watches and stops the ranks of jobs.");
  CLI::App& app = command_line.app();
  gantry::agent::AgentOptions options;
  options.controller = "127.0.0.1:6817";
  options.node_name = gantry::agent::ShortHostName();
  options.work_dir = "/var/spool/gantry";
  std::string hwloc_xml;
  std::vector<std::string> role_overrides;
  std::string metrics_listen;
  app.add_option("--controller", options.controller,
                 "gantryd address: HOST:PORT or unix:PATH")
      ->capture_default_str();
  app.add_option("--node-name", options.node_name,
                 "Name of this node in the cluster (default: short hostname)")
      ->capture_default_str();
  app.add_option("--munge-socket", options.munge_socket,
                 "munged's socket, for the credential that proves this agent "
                 "runs as root (empty: MUNGE's default)");
  app.add_option("--tls-ca", options.tls.ca_path,
                 "CA file (PEM) that signed gantryd's certificate: the stream "
                 "to a HOST:PORT controller uses TLS and verifies gantryd "
                 "(needed when gantryd has --tls-cert; empty: plain TCP). "
                 "Ranks get it as GANTRY_TLS_CA");
  app.add_option("--tls-server-name", options.tls.server_name,
                 "Name gantryd's certificate must carry, when not the host of "
                 "--controller (e.g. when --controller is an IP address)");
  app.add_option("--address", options.address,
                 "Address other nodes reach this one at (MASTER_ADDR of jobs "
                 "whose first node this is; default: first non-loopback IPv4)");
  app.add_option("--hwloc-xml", hwloc_xml,
                 "Discover the node from a saved hwloc XML topology instead "
                 "of this machine")
      ->check(CLI::ExistingFile);
  std::string pci_ids_path;
  app.add_option("--pci-ids", pci_ids_path,
                 "PCI ID database (pci.ids) that names GPUs hwloc knows only "
                 "by their vendor and device ids, as in XML files written "
                 "without it (default: the first of " +
                     absl::StrJoin(gantry::PciIds::SystemPaths(), ", ") + ")");
  std::string features;
  app.add_option("--features", features,
                 "Features of this node, comma separated (Slurm's NodeName "
                 "Features=), e.g. a100,ib,rack3: what jobs select with "
                 "--constraint");
  app.add_option("--work-dir", options.work_dir,
                 "Directory for job scripts and rank records")
      ->capture_default_str();
  app.add_option("--stop-grace", options.stop_grace_seconds,
                 "Seconds ranks get between SIGTERM and SIGKILL when the "
                 "agent stops")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
  app.add_option("--preflight-port", options.preflight_port,
                 "TCP port on --address where the pre-flight gang checks of "
                 "jobs on this node receive from their peers (0: any free "
                 "port, announced to gantryd)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  std::string sysfs_root;
  app.add_option("--sysfs-root", sysfs_root,
                 "Where GPUs are looked up on the PCI bus for health checks "
                 "(default: /sys when discovering this machine; not checked "
                 "with --hwloc-xml unless given)");
  std::string cgroups_mode = "auto";
  app.add_option("--cgroups", cgroups_mode,
                 "auto: a cgroup v2 per job (CPU and memory limits, whole-job "
                 "kill, OOM detection) where the node has cgroup v2; off: "
                 "process groups only")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "off"}));
  app.add_option("--cgroup-root", options.cgroups.root,
                 "Where job cgroups go, as a path under the cgroup2 mount "
                 "(e.g. /gantry); each node gets ROOT/NODE_NAME (default: "
                 "the agent's own cgroup + /gantry, which under systemd needs "
                 "Delegate=yes)");
  app.add_option("--network-role", role_overrides,
                 "Override a device's network role: NAME=compute|storage|"
                 "management (repeatable), e.g. mlx5_4=storage");
  app.add_option("--cache-dir", options.cache_dir,
                 "Local directory of the dataset cache (--dataset): made "
                 "root-owned 0711, with a 0700 directory per user in it "
                 "(empty: WORK_DIR/datasets)");
  std::string cache_size = "100G";
  app.add_option("--cache-size", cache_size,
                 "Most the dataset cache holds (K, M, G, T suffixes); least "
                 "recently used datasets no job uses are evicted past it")
      ->capture_default_str();
  std::string cache_user_limit = "0";
  app.add_option("--cache-user-limit", cache_user_limit,
                 "Most one user's datasets may take of the cache (K, M, G, T "
                 "suffixes; 0: no limit beyond --cache-size)")
      ->capture_default_str();
  app.add_option("--memory-checkpoint-dir", options.memory_checkpoint_dir,
                 "Where jobs run with --memory-checkpoints keep their ranks' "
                 "snapshots and their peers' replicas: a directory in memory "
                 "(tmpfs), made by the agent and writable by no one else "
                 "(empty: /dev/shm/gantry/NODE_NAME)");
  std::string memory_checkpoint_limit = "0";
  app.add_option("--memory-checkpoint-limit", memory_checkpoint_limit,
                 "Most one job's snapshot replicas may take on this node (K, "
                 "M, G, T suffixes; 0: a quarter of the node's memory); a "
                 "larger snapshot is not replicated")
      ->capture_default_str();
  app.add_option("--metrics-listen", metrics_listen,
                 "IP:PORT of the Prometheus /metrics endpoint, e.g. "
                 "0.0.0.0:9818 (port 0: any free; empty: none)");
  if (std::optional<int> exit_code = command_line.Parse(argc, argv)) {
    return *exit_code;
  }
  // With several controllers: follows the leader quickly through a
  // hand-over or a failover. Not with one: the poller wakes every agent ten
  // times a second for nothing (with a thousand agents on two cores, a
  // third of the machine), and the link drives its one channel's
  // reconnection itself (ControllerLink::Run). Before the first channel.
  if (gantry::SplitControllerTargets(options.controller).size() > 1) {
    gantry::PollReconnectsOften();
  }
  if (options.address.empty())
    options.address = gantry::agent::FirstNonLoopbackAddress();
  if (absl::Status valid = gantry::CheckMetricsListen(metrics_listen);
      !valid.ok()) {
    std::cerr << "gantry-agent: --metrics-listen: " << valid.message() << "\n";
    return 2;
  }
  absl::StatusOr<std::vector<std::string>> parsed_features =
      gantry::ParseFeatureList(features);
  if (!parsed_features.ok()) {
    std::cerr << "gantry-agent: --features: "
              << parsed_features.status().message() << "\n";
    return 2;
  }
  options.features = *parsed_features;
  for (auto [flag, text, bytes] :
       {std::tuple("--cache-size", &cache_size, &options.cache_size_bytes),
        std::tuple("--cache-user-limit", &cache_user_limit,
                   &options.cache_user_limit_bytes),
        std::tuple("--memory-checkpoint-limit", &memory_checkpoint_limit,
                   &options.memory_checkpoint_limit_bytes)}) {
    absl::StatusOr<uint64_t> mb = gantry::MemoryMb(*text);
    if (!mb.ok()) {
      std::cerr << "gantry-agent: " << flag << ": " << mb.status().message()
                << "\n";
      return 2;
    }
    *bytes = *mb << 20;
  }
  if (options.cache_size_bytes == 0) {
    std::cerr << "gantry-agent: --cache-size must be more than 0\n";
    return 2;
  }
  options.cgroups.enabled = cgroups_mode != "off";
  options.cgroups.node_name = options.node_name;
  options.sysfs_root =
      !sysfs_root.empty() ? sysfs_root : (hwloc_xml.empty() ? "/sys" : "");

  {
    // A CA file that cannot be used is an error now, not an agent that
    // never connects.
    grpc::ChannelArguments unused;
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        gantry::ChannelCredentialsFor(options.controller, options.tls, unused);
    if (!credentials.ok()) {
      std::cerr << "gantry-agent: --tls-ca: " << credentials.status().message()
                << "\n";
      return 2;
    }
  }
  absl::StatusOr<gantry::v1::NodeInventory> inventory;
  {
    // Read once for discovery and let go: the names are in the inventory.
    const absl::StatusOr<gantry::PciIds> pci_ids =
        gantry::PciIds::LoadConfigured(pci_ids_path);
    const gantry::PciIds none;
    const gantry::PciIds& names = pci_ids.ok() ? *pci_ids : none;
    inventory = hwloc_xml.empty()
                    ? gantry::agent::DiscoverThisMachine(names)
                    : gantry::agent::DiscoverFromHwlocXml(hwloc_xml, names);
    if (!inventory.ok()) {
      gantry::log::Error("node discovery failed",
                         {{"error", inventory.status().ToString()}});
      return 1;
    }
    if (std::string note = gantry::agent::UnnamedGpuNote(*inventory, pci_ids);
        !note.empty()) {
      gantry::log::Warn(note);
    }
  }
  gantry::NetworkRoleOverrides overrides;
  for (const std::string& entry : role_overrides) {
    size_t equals = entry.find('=');
    absl::StatusOr<gantry::NetworkRole> role =
        equals == std::string::npos
            ? absl::InvalidArgumentError("expected NAME=ROLE")
            : gantry::ParseNetworkRole(entry.substr(equals + 1));
    if (!role.ok()) {
      std::cerr << "gantry-agent: --network-role " << entry << ": "
                << role.status().message() << "\n";
      return 2;
    }
    overrides[entry.substr(0, equals)] = *role;
  }
  std::string default_route;
  if (hwloc_xml.empty()) {
    // The HCAs' ports (state, link layer, rate, GUIDs) come from verbs; a
    // machine without HCAs has none and carries on.
    absl::StatusOr<std::vector<gantry::v1::NetworkDevice>> verbs =
        gantry::agent::DiscoverVerbsDevices();
    if (verbs.ok()) {
      gantry::agent::AttachVerbsDevices(*verbs, &*inventory);
    } else {
      gantry::log::Warn("verbs discovery failed; reporting no HCA ports",
                        {{"error", verbs.status().ToString()}});
    }
    default_route = gantry::agent::DefaultRouteInterfaceOfThisMachine();
  }
  gantry::agent::AssignNetworkRoles(overrides, default_route, &*inventory);

  // Before any thread: each inherits the mask.
  const sigset_t stop_signals = gantry::BlockStopSignals();
  // After the signal mask: the endpoint's HTTP threads inherit it. Ranks go
  // on without the monitoring port; this error says why it is missing.
  auto metrics_registry = std::make_shared<prometheus::Registry>();
  gantry::agent::AgentMetrics agent_metrics(*metrics_registry);
  options.metrics = &agent_metrics;
  std::unique_ptr<gantry::MetricsEndpoint> metrics_endpoint =
      gantry::MetricsEndpoint::StartOrLogError(metrics_listen,
                                               metrics_registry);

  gantry::log::Info(
      "agent starting",
      {{"node", options.node_name},
       {"address", options.address},
       {"controller", options.controller},
       {"metrics", metrics_endpoint ? metrics_endpoint->address() : ""},
       {"work_dir", options.work_dir},
       {"inventory", inventory->source()},
       {"cpus", inventory->cpus()},
       {"gpus", inventory->gpus_size()},
       {"memory_mb", inventory->memory_mb()},
       {"pid", static_cast<int>(getpid())}});
  options.watchdog_interval =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          gantry::systemd::WatchdogPingInterval());
  if (options.watchdog_interval.count() > 0) {
    options.watchdog_ping = gantry::systemd::NotifyWatchdog;
  }
  gantry::agent::Agent agent(options, *inventory);
  std::thread runner([&agent] { agent.Run(); });
  // Ready once the agent runs, not once it reaches gantryd: a node must
  // come up (and stay up) while the controller is away.
  gantry::systemd::NotifyReady("node " + options.node_name + ", controller " +
                               options.controller);
  gantry::WaitForStopSignal(stop_signals);
  gantry::systemd::NotifyStopping("stopping ranks");
  agent.Stop();
  runner.join();
  gantry::log::Info("stopped");
  return 0;
}
