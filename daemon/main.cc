// gantryd: parses flags (and the same keys from --config), opens the state
// database, and wires the controller to its gRPC front ends.
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <prometheus/registry.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "absl/strings/str_cat.h"
#include "common/cluster_name.h"
#include "common/crash_point.h"
#include "common/daemon_start.h"
#include "common/hostlist.h"
#include "common/log.h"
#include "common/metrics_endpoint.h"
#include "common/request_limits.h"
#include "common/systemd_notify.h"
#include "common/tls_credentials.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/controller_metrics.h"
#include "daemon/controller/features/standard_features.h"
#include "daemon/controller/loop_watchdog.h"
#include "daemon/controller/submission_size.h"
#include "daemon/replication/handover.h"
#include "daemon/replication/replication_status.h"
#include "daemon/replication/snapshot_install.h"
#include "daemon/replication/snapshot_service.h"
#include "daemon/replication/standby_phase.h"
#include "daemon/replication/step_down.h"
#include "daemon/rpc/grpc_services.h"
#include "daemon/rpc/leadership_fence.h"
#include "daemon/rpc/rpc_metrics_interceptor.h"
#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/partition_config.h"
#include "daemon/scheduler/straggler_detector.h"
#include "daemon/store/rocksdb_store.h"
#include "daemon/store/state_dir.h"

namespace {

struct Flags {
  std::string state_dir = "/var/lib/gantry";
  std::string cluster_name = gantry::kDefaultClusterName;
  std::string default_account;
  std::string listen = "0.0.0.0:6817";
  std::string socket = "/run/gantry/gantryd.sock";
  std::vector<std::string> partitions = {"main"};
  double heartbeat_interval = 1.0;
  double node_timeout = 3.0;
  double reconnect_grace = 30.0;
  double node_mtbf_hours = 6329;
  double checkpoint_cost = 30;
  double inactive_limit = 60.0;
  uint32_t kill_grace = 10;
  uint32_t max_pending_submissions = 20000;
  uint32_t agent_messages_per_heartbeat = 100;
  uint32_t agent_max_message_bytes = 1 << 20;
  uint32_t max_restarts = 3;
  double restart_backoff = 1.0;
  double node_fault_settle = 1.0;
  std::string preflight = "off";
  double preflight_timeout = 30.0;
  double preflight_slow_factor = 0.5;
  double preflight_megabytes = 32.0;
  std::string preflight_command;
  std::string preflight_gloo = "auto";
  double min_job_age = 300;
  double stage_ahead = 3600;
  double history_retention_days = 30;
  std::string hot_spares;
  std::string unlisted_nodes = "last";
  std::string straggler_policy = "report";
  double straggler_factor = 1.5;
  double straggler_duration = 60.0;
  uint32_t straggler_min_peers = 2;
  double priority_weight_age = 1000;
  double priority_weight_job_size = 1000;
  double priority_weight_fairshare = 10000;
  double priority_max_age_hours = 7 * 24;
  double priority_decay_half_life_hours = 7 * 24;
  std::string metrics_listen = "0.0.0.0:9817";
  std::string auth = "munge";
  std::string munge_socket;
  std::string admin_group;
  std::string tls_cert;
  std::string tls_key;
  std::vector<std::string> etcd;
  std::string etcd_prefix = "/gantry";
  std::string etcd_ca;
  std::string etcd_cert;
  std::string etcd_key;
  bool etcd_insecure = false;
  std::string replication_key = "/etc/gantry/replication.key";
  std::string name;
  std::string advertise;
  int64_t lease_ttl = 2;
  uint64_t log_retain = 10'000;
  double log_truncate_interval = 5.0;
  std::string tls_ca;
};

void AddFlags(CLI::App& app, Flags& flags) {
  app.add_option("--state-dir", flags.state_dir,
                 "Directory of the state database (RocksDB)")
      ->capture_default_str();
  app.add_option("--cluster-name", flags.cluster_name,
                 "The cluster's name: SLURM_CLUSTER_NAME in jobs, and what "
                 "sacct, sreport and scontrol show config print (Slurm's "
                 "ClusterName)")
      ->capture_default_str();
  app.add_option("--default-account", flags.default_account,
                 "The account of jobs that name none (-A): "
                 "SLURM_JOB_ACCOUNT, and what squeue, sacct and scontrol "
                 "show (empty: none)");
  app.add_option("--listen", flags.listen,
                 "HOST:PORT for agents and remote clients (port 0: any free)")
      ->capture_default_str();
  app.add_option("--socket", flags.socket,
                 "Unix socket for local clients (empty: none)")
      ->capture_default_str();
  app.add_option("--partition", flags.partitions,
                 "A partition, in slurm.conf's PartitionName syntax: NAME "
                 "[Nodes=HOSTLIST|ALL] [Default=YES] [DefaultTime=TIME] "
                 "[MaxTime=TIME] [MaxNodes=N] [HotSpares=HOSTLIST]. Repeat "
                 "for each partition. A bare NAME holds every node")
      ->capture_default_str()
      ->allow_extra_args(false)
      ->check(CLI::Validator(
          [](const std::string& line) -> std::string {
            absl::StatusOr<gantry::PartitionConfig> parsed =
                gantry::ParsePartitionLine(line);
            return parsed.ok() ? "" : std::string(parsed.status().message());
          },
          "PARTITION"));
  app.add_option("--heartbeat-interval", flags.heartbeat_interval,
                 "Seconds between agent heartbeats")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 3600.0));
  app.add_option("--node-timeout", flags.node_timeout,
                 "Seconds without word from an agent before its node is DOWN "
                 "and its jobs NODE_FAIL")
      ->capture_default_str()
      ->check(CLI::Range(0.2, 86400.0));
  app.add_option("--reconnect-grace", flags.reconnect_grace,
                 "Seconds agents have to reconnect after gantryd starts")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--node-mtbf-hours", flags.node_mtbf_hours,
                 "Mean hours between failures of one node that the site "
                 "expects, weighed against the failures gantryd sees, for "
                 "the checkpoint interval jobs get "
                 "(GANTRY_CHECKPOINT_INTERVAL); 0: give none")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--checkpoint-cost", flags.checkpoint_cost,
                 "Seconds a checkpoint write is assumed to take until a "
                 "job's `gantry checkpoint` reports measure its own")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--inactive-limit", flags.inactive_limit,
                 "Seconds an interactive allocation (srun or salloc outside "
                 "a job) may go without word from its client before it is "
                 "ended: TIMEOUT, reason InactiveLimit (pending: CANCELLED). "
                 "Clients send word every third of it. 0: never (Slurm's "
                 "InactiveLimit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--kill-grace", flags.kill_grace,
                 "Seconds between SIGTERM and SIGKILL when ranks are stopped")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
  app.add_option("--max-pending-submissions", flags.max_pending_submissions,
                 "Submissions waiting to be stored before more are refused "
                 "as busy (the CLI retries them)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  app.add_option("--agent-messages-per-heartbeat",
                 flags.agent_messages_per_heartbeat,
                 "Messages an agent stream may send per heartbeat interval on "
                 "average (ten times as many at once); a stream that sends "
                 "more is cut as flooding")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000000));
  app.add_option("--agent-max-message-bytes", flags.agent_max_message_bytes,
                 "Largest message an agent may send; a stream that sends a "
                 "larger one is cut")
      ->capture_default_str()
      ->check(CLI::Range(4096, 64 << 20));
  app.add_option("--max-restarts", flags.max_restarts,
                 "Restarts a failed job gets unless it says (--max-restarts "
                 "in the job)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app.add_option("--restart-backoff", flags.restart_backoff,
                 "Seconds before the first restart after an application "
                 "failure; doubles with each restart")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--node-fault-settle", flags.node_fault_settle,
                 "Seconds after a node fault before the failed job's other "
                 "nodes serve its restart again: they are then probed and "
                 "used once they answer, so nodes failing together within "
                 "this time cost one restart, not one each (spares and "
                 "other free nodes serve the restart at once)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 60.0));
  app.add_option("--preflight", flags.preflight,
                 "Which jobs run the pre-flight gang check (per-node health, "
                 "a TCP ring between their nodes, gloo all-reduce, "
                 "--preflight-command) before their ranks start, at every "
                 "attempt, when they do not say (--preflight / "
                 "--preflight=no): off, multinode (jobs of two or more "
                 "nodes) or all")
      ->capture_default_str()
      ->check(CLI::IsMember({"off", "multinode", "all"}));
  app.add_option("--preflight-timeout", flags.preflight_timeout,
                 "Seconds a pre-flight check may take; a node that has not "
                 "passed by then is swapped out")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--preflight-slow-factor", flags.preflight_slow_factor,
                 "A node whose pre-flight bandwidth is below this times the "
                 "gang's median is marked degraded in the job's pre-flight "
                 "summary; bandwidth alone swaps no node out (0: not "
                 "judged)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--preflight-megabytes", flags.preflight_megabytes,
                 "Megabytes each node sends to the next in the pre-flight "
                 "TCP ring")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1024.0));
  app.add_option("--preflight-command", flags.preflight_command,
                 "A site's own pre-flight check, run by /bin/sh on every node "
                 "of the job (e.g. nccl-tests' all_reduce_perf); a non-zero "
                 "exit swaps the node out, and an \"Avg bus bandwidth\" "
                 "line is compared with the gang's (empty: none)");
  app.add_option("--preflight-gloo", flags.preflight_gloo,
                 "auto: the pre-flight also runs a PyTorch gloo all-reduce "
                 "across the job's nodes where python3 has torch; off: never")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "off"}));
  app.add_option("--min-job-age", flags.min_job_age,
                 "Seconds a finished job stays in the live state (gantry "
                 "queue --all, dependencies) before it moves to the history, "
                 "where gantry job ID still finds it (Slurm's MinJobAge)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 7.0 * 86400));
  app.add_option("--stage-ahead", flags.stage_ahead,
                 "Seconds before a waiting job's expected start (its backfill "
                 "reservation) from which its datasets (--dataset) are "
                 "copied into the caches of the nodes reserved for it "
                 "(0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 7.0 * 86400));
  app.add_option("--history-retention", flags.history_retention_days,
                 "Days a finished job's record and events stay in the "
                 "history after it ended (0: for ever)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 36500.0));
  app.add_option("--hot-spares", flags.hot_spares,
                 "Hostlist of nodes kept free for restarts of failed jobs, "
                 "e.g. node[15-16]");
  app.add_option("--unlisted-nodes", flags.unlisted_nodes,
                 "What nodes missing from the imported topology take: last "
                 "(any job, only when nothing on listed nodes fits), single "
                 "(single-node jobs only, last) or never")
      ->capture_default_str()
      ->check(CLI::IsMember({"last", "single", "never"}));
  app.add_option("--straggler-policy", flags.straggler_policy,
                 "What is done about a node whose ranks step well below "
                 "their peers': off (not looked for), report (gantry job, "
                 "gantry status, metrics), swap (also drained and swapped "
                 "out at the job's next checkpoint when a spare is free)")
      ->capture_default_str()
      ->check(CLI::IsMember({"off", "report", "swap"}));
  app.add_option("--straggler-factor", flags.straggler_factor,
                 "A node is slow when its step time is at least this many "
                 "times the median of its job's other nodes")
      ->capture_default_str()
      ->check(CLI::Range(1.05, 100.0));
  app.add_option("--straggler-duration", flags.straggler_duration,
                 "Seconds a node must be slow without a break to be a "
                 "straggler (one slow step is not)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--straggler-min-peers", flags.straggler_min_peers,
                 "Other nodes with a known step time a node is judged "
                 "against: jobs with fewer have no stragglers")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--priority-weight-age", flags.priority_weight_age,
                 "Priority points a job gets for waiting --priority-max-age "
                 "(PriorityWeightAge)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--priority-weight-job-size", flags.priority_weight_job_size,
                 "Priority points of a 512-GPU job, in proportion below "
                 "(PriorityWeightJobSize)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--priority-weight-fairshare", flags.priority_weight_fairshare,
                 "Priority points of a user with no recent usage; a user "
                 "at the mean usage gets half (PriorityWeightFairshare)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--priority-max-age", flags.priority_max_age_hours,
                 "Hours of waiting after which the age factor is full "
                 "(PriorityMaxAge)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1e6));
  app.add_option("--priority-decay-half-life",
                 flags.priority_decay_half_life_hours,
                 "Hours after which past usage counts half for fair share "
                 "(PriorityDecayHalfLife)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1e6));
  app.add_option("--auth", flags.auth,
                 "munge: every request carries a MUNGE credential (as in "
                 "Slurm); none: trust the user a client claims (development "
                 "only)")
      ->capture_default_str()
      ->check(CLI::IsMember({"munge", "none"}));
  app.add_option("--munge-socket", flags.munge_socket,
                 "munged's socket (empty: MUNGE's default, "
                 "/run/munge/munge.socket.2)");
  app.add_option("--tls-cert", flags.tls_cert,
                 "PEM certificate (chain) of this controller: with --tls-key, "
                 "--listen speaks only TLS, and agents and remote clients "
                 "need --tls-ca (the unix socket stays plain; empty: plain "
                 "TCP)");
  app.add_option("--tls-key", flags.tls_key,
                 "PEM private key of --tls-cert (keep it readable by root "
                 "only)");
  app.add_option("--admin-group", flags.admin_group,
                 "Unix group whose members may drain, resume and import "
                 "topology (root always may)");
  app.add_option("--metrics-listen", flags.metrics_listen,
                 "IP:PORT of the Prometheus /metrics endpoint (port 0: any "
                 "free; empty: none)")
      ->capture_default_str();
  app.add_option("--etcd", flags.etcd,
                 "etcd endpoints HOST:PORT,... : run as one of several "
                 "controllers sharing that etcd cluster (leader or hot "
                 "standby; see docs/admin-guide.md \"High availability\"). "
                 "Empty: this gantryd alone with its local state (the "
                 "default)")
      ->delimiter(',');
  app.add_option("--etcd-prefix", flags.etcd_prefix,
                 "Key prefix of this cluster's records in etcd")
      ->capture_default_str();
  app.add_option("--etcd-ca", flags.etcd_ca,
                 "PEM CA that signed the etcd members' certificates: with "
                 "--etcd-cert and --etcd-key, gantryd speaks TLS to etcd and "
                 "shows its client certificate (etcd's --client-cert-auth; "
                 "gantry-etcd-setup certs makes them)");
  app.add_option("--etcd-cert", flags.etcd_cert,
                 "PEM client certificate gantryd shows etcd (CN=gantry: the "
                 "etcd user whose role is limited to --etcd-prefix)");
  app.add_option("--etcd-key", flags.etcd_key,
                 "PEM private key of --etcd-cert (readable by gantryd only: "
                 "refused if every user may read it)");
  app.add_flag("--etcd-insecure", flags.etcd_insecure,
               "Speak plain gRPC to etcd, without TLS: anyone who can reach "
               "etcd's client port can then read every job's script and make "
               "the leader run jobs as any user. Without it, gantryd --etcd "
               "refuses to start unless --etcd-ca, --etcd-cert and "
               "--etcd-key are given");
  app.add_option("--replication-key", flags.replication_key,
                 "With --etcd: file of the cluster key (32+ random bytes, "
                 "mode 0600, the same on every controller, kept outside "
                 "etcd) that seals what the controllers keep in etcd, so "
                 "that etcd need not be trusted: gantryd refuses to start "
                 "without it, or if others may read or write it")
      ->capture_default_str();
  app.add_option("--name", flags.name,
                 "This controller's name among its peers (default: the host "
                 "name)");
  app.add_option("--advertise", flags.advertise,
                 "HOST:PORT where agents and clients reach this controller, "
                 "as a standby tells them (default: --listen's, with the "
                 "host name for 0.0.0.0)");
  app.add_option("--lease-ttl", flags.lease_ttl,
                 "Seconds a leader's etcd lease lasts unrenewed: a dead "
                 "leader is replaced about this long after it stops")
      ->capture_default_str()
      ->check(CLI::Range(2, 60));
  app.add_option("--log-retain", flags.log_retain,
                 "Log entries the leader keeps in etcd behind what every "
                 "standby has applied; older ones are truncated (a standby "
                 "that falls further behind copies the leader's state)")
      ->capture_default_str();
  app.add_option("--log-truncate-interval", flags.log_truncate_interval,
                 "Seconds between the leader's truncations of the log in etcd")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--tls-ca", flags.tls_ca,
                 "PEM CA that signed the other controllers' --tls-cert: a "
                 "standby dials the leader with TLS to copy its state "
                 "(empty: plain TCP)");
}

int RunGantryd(int argc, char** argv) {
  if (std::optional<int> exit_code =
          gantry::BeginDaemon("gantryd", gantry::kControllerCrashPoints)) {
    return *exit_code;
  }
  gantry::DaemonCommandLine command_line(
      "gantryd", "controller",
      "gantryd: the Gantry controller. Keeps jobs and nodes in RocksDB, "
      "schedules jobs as gangs, and serves the gantry CLI and the agents.");
  Flags flags;
  AddFlags(command_line.app(), flags);
  if (std::optional<int> exit_code = command_line.Parse(argc, argv)) {
    return *exit_code;
  }
  if (flags.node_timeout < 2 * flags.heartbeat_interval) {
    std::cerr << "gantryd: --node-timeout (" << flags.node_timeout
              << " s) must be at least twice --heartbeat-interval ("
              << flags.heartbeat_interval
              << " s), or healthy nodes would be declared down\n";
    return 2;
  }
  if (absl::Status valid =
          gantry::CheckSlurmName("--cluster-name", flags.cluster_name);
      !valid.ok()) {
    std::cerr << "gantryd: " << valid.message() << "\n";
    return 2;
  }
  if (!flags.default_account.empty()) {
    if (absl::Status valid =
            gantry::CheckSlurmName("--default-account", flags.default_account);
        !valid.ok()) {
      std::cerr << "gantryd: " << valid.message() << "\n";
      return 2;
    }
  }
  if (absl::Status valid = gantry::CheckMetricsListen(flags.metrics_listen);
      !valid.ok()) {
    std::cerr << "gantryd: --metrics-listen: " << valid.message() << "\n";
    return 2;
  }
  absl::StatusOr<std::vector<gantry::PartitionConfig>> partitions =
      gantry::ParsePartitions(flags.partitions);
  if (!partitions.ok()) {
    std::cerr << "gantryd: " << partitions.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> tcp_credentials =
      gantry::ServerCredentialsFromFiles(flags.tls_cert, flags.tls_key);
  if (!tcp_credentials.ok()) {
    std::cerr << "gantryd: " << tcp_credentials.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<gantry::Authenticator> authenticator =
      gantry::Authenticator::Create({.use_munge = flags.auth == "munge",
                                     .munge_socket = flags.munge_socket,
                                     .admin_group = flags.admin_group});
  if (!authenticator.ok()) {
    std::cerr << "gantryd: --admin-group: " << authenticator.status().message()
              << "\n";
    return 2;
  }
  if (authenticator->uses_munge()) {
    // Without munged every request would be refused: say so now, not at
    // the first request.
    absl::Status munge = authenticator->CheckMunged();
    if (!munge.ok()) {
      std::cerr << "gantryd: " << munge.message()
                << "; start munged, set --munge-socket, or (development "
                   "only) --auth=none\n";
      return 1;
    }
  } else {
    gantry::log::Warn(
        "authentication is off (--auth=none): any client can act as any "
        "user, and any process can serve a node");
  }
  gantry::RestrictFileCreationMask();
  if (absl::Status state_dir = gantry::PrepareStateDirectory(flags.state_dir);
      !state_dir.ok()) {
    std::cerr << "gantryd: " << state_dir.message() << "\n";
    return 1;
  }
  if (!flags.etcd.empty()) {
    // A standby that fetched a copy of the leader's state restarted to put
    // it in place of its database (daemon/replication/snapshot_install.h).
    absl::StatusOr<bool> installed = gantry::replication::FinishSnapshotInstall(
        gantry::replication::SnapshotPaths(flags.state_dir));
    if (!installed.ok()) {
      gantry::log::Error("cannot install the copy of the leader's state",
                         {{"error", installed.status().ToString()}});
      return 1;
    }
  }
  absl::StatusOr<std::unique_ptr<gantry::RocksDbStore>> store =
      gantry::RocksDbStore::Open(flags.state_dir + "/db");
  if (!store.ok()) {
    gantry::log::Error("cannot open state",
                       {{"error", store.status().ToString()}});
    return 1;
  }
  if (!flags.socket.empty()) {
    if (absl::Status socket_dir = gantry::CreateSharedDirectory(
            std::filesystem::path(flags.socket).parent_path().string());
        !socket_dir.ok()) {
      std::cerr << "gantryd: --socket: " << socket_dir.message() << "\n";
      return 1;
    }
  }
  // The metrics endpoint serves from the start: a standby exports its
  // replication lag there, and the controller's metrics join them once
  // it leads. Scheduling goes on without its monitoring port: an
  // unreachable endpoint shows as a down target in Prometheus, and the
  // error logged says why.
  auto metrics_registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<gantry::MetricsEndpoint> metrics_endpoint =
      gantry::MetricsEndpoint::StartOrLogError(flags.metrics_listen,
                                               metrics_registry);
  gantry::StateStore* state = store->get();
  std::unique_ptr<gantry::replication::ReplicatedController> replicated;
  gantry::replication::Elected standby_ports;  // closed once we listen
  if (!flags.etcd.empty()) {
    // One of several controllers: a standby until elected (this blocks),
    // then the leader on a store that replicates through etcd.
    absl::StatusOr<gantry::replication::Elected> elected =
        gantry::replication::StandUntilElected(
            {.etcd_endpoints = flags.etcd,
             .etcd_tls = {.ca_path = flags.etcd_ca,
                          .cert_path = flags.etcd_cert,
                          .key_path = flags.etcd_key,
                          .insecure = flags.etcd_insecure},
             .replication_key = flags.replication_key,
             .prefix = flags.etcd_prefix,
             .name = flags.name,
             .address = flags.advertise,
             .lease_ttl_seconds = flags.lease_ttl,
             .state_dir = flags.state_dir,
             .peer_tls = {.ca_path = flags.tls_ca, .server_name = ""},
             .log_retain = flags.log_retain,
             .truncate_interval = std::chrono::milliseconds(
                 static_cast<int64_t>(flags.log_truncate_interval * 1000))},
            **store,
            [argv](const std::string& reason) {
              gantry::replication::StepDown(argv, reason);
            },
            {.listen = flags.listen,
             .socket = flags.socket,
             .tcp_credentials = *tcp_credentials},
            metrics_registry.get());
    if (!elected.ok()) {
      // Also a refusal to start: etcd without TLS, endpoints of several
      // etcd clusters, TLS files that do not fit.
      gantry::log::Error("cannot run as one of several controllers",
                         {{"error", elected.status().ToString()}});
      return 1;
    }
    replicated = std::move(elected->controller);
    state = &replicated->store();
    flags.listen = elected->listen;
    standby_ports = std::move(*elected);
    gantry::SetLeadershipFence([leadership = &replicated->leadership()] {
      return leadership->Valid();
    });
  }

  boost::asio::io_context io;
  gantry::RealClock clock;
  gantry::ControllerMetrics controller_metrics(*metrics_registry);
  gantry::ControllerOptions options;
  options.metrics = &controller_metrics;
  if (replicated) {
    options.may_act = [leadership = &replicated->leadership()] {
      return leadership->Valid();
    };
  }
  options.state_dir = flags.state_dir;
  options.cluster_name = flags.cluster_name;
  options.default_account = flags.default_account;
  options.partitions = std::move(*partitions);
  constexpr double kHourMs = 3600.0 * 1000;
  options.priority_weights = gantry::PriorityWeights{
      .age_weight = flags.priority_weight_age,
      .size_weight = flags.priority_weight_job_size,
      .fair_share_weight = flags.priority_weight_fairshare,
      .age_max_ms =
          static_cast<int64_t>(flags.priority_max_age_hours * kHourMs),
      .size_norm_gpus = 512,
      .half_life_ms =
          static_cast<int64_t>(flags.priority_decay_half_life_hours * kHourMs),
  };
  options.heartbeat_interval_ms =
      static_cast<int64_t>(flags.heartbeat_interval * 1000);
  options.node_timeout_ms = static_cast<int64_t>(flags.node_timeout * 1000);
  options.reconnect_grace_ms =
      static_cast<int64_t>(flags.reconnect_grace * 1000);
  options.node_mtbf_hours = flags.node_mtbf_hours;
  options.checkpoint_cost_seconds = flags.checkpoint_cost;
  options.inactive_limit_ms = static_cast<int64_t>(flags.inactive_limit * 1000);
  options.kill_grace_seconds = flags.kill_grace;
  options.default_max_restarts = flags.max_restarts;
  options.restart_backoff_ms =
      static_cast<int64_t>(flags.restart_backoff * 1000);
  options.min_job_age_ms = static_cast<int64_t>(flags.min_job_age * 1000);
  options.stage_ahead.window_ms =
      static_cast<int64_t>(flags.stage_ahead * 1000);
  options.history_retention_ms =
      static_cast<int64_t>(flags.history_retention_days * 24 * 3600 * 1000);
  absl::StatusOr<std::vector<std::string>> spares =
      gantry::ExpandHostlist(flags.hot_spares);
  if (!spares.ok()) {
    std::cerr << "gantryd: --hot-spares: " << spares.status().message() << "\n";
    return 2;
  }
  options.hot_spares = {spares->begin(), spares->end()};
  options.unlisted_nodes =
      *gantry::ParseUnlistedNodes(flags.unlisted_nodes);  // checked
  gantry::FeatureSettings features;
  gantry::PreflightOptions& preflight = features.preflight;
  preflight.mode = *gantry::ParsePreflightMode(flags.preflight);  // checked
  preflight.timeout_ms = static_cast<int64_t>(flags.preflight_timeout * 1000);
  preflight.slow_factor = flags.preflight_slow_factor;
  preflight.transfer_bytes =
      static_cast<uint64_t>(flags.preflight_megabytes * 1024 * 1024);
  preflight.site_command = flags.preflight_command;
  preflight.gloo = flags.preflight_gloo == "auto";
  gantry::StragglerSettings& stragglers = features.stragglers;
  stragglers.response =
      *gantry::ParseStragglerResponse(flags.straggler_policy);  // checked
  stragglers.policy.slow_factor = flags.straggler_factor;
  stragglers.policy.min_duration_ms =
      static_cast<int64_t>(flags.straggler_duration * 1000);
  stragglers.policy.min_peers = flags.straggler_min_peers;
  // A node not heard from in a few heartbeats is not judged, nor a peer.
  stragglers.policy.stale_ms =
      std::max<int64_t>(5000, options.heartbeat_interval_ms * 5);
  stragglers.heartbeat_interval_ms = options.heartbeat_interval_ms;
  features.fault_survivors.settle_ms =
      static_cast<int64_t>(flags.node_fault_settle * 1000);
  features.fault_survivors.heartbeat_interval_ms =
      options.heartbeat_interval_ms;
  options.features = gantry::StandardFeatures(features);
  gantry::Controller controller(io, *state, clock, options);
  absl::Status started = controller.Start();
  if (!started.ok()) {
    gantry::log::Error("cannot load state", {{"error", started.ToString()}});
    return 1;
  }

  gantry::ClientServiceImpl client_service(io, controller, *authenticator,
                                           flags.max_pending_submissions);
  std::unique_ptr<gantry::replication::ReplicationStatusSource>
      replication_status;
  std::unique_ptr<gantry::replication::Handover> handover;
  if (replicated) {
    replication_status =
        std::make_unique<gantry::replication::ReplicationStatusSource>(
            *replicated);
    client_service.SetReplicationStatus(
        [source = replication_status.get()] { return source->Get(); });
    handover = std::make_unique<gantry::replication::Handover>(
        *replicated, [argv](const std::string& reason) {
          gantry::replication::StepDown(argv, reason);
        });
    client_service.SetHandover(
        [handover = handover.get()](
            const gantry::v1::HandoverRequest& request,
            gantry::ClientServiceImpl::HandoverAnswer answer) {
          handover->Start(request, std::move(answer));
        });
  }
  gantry::AgentServiceImpl agent_service(
      io, controller, *authenticator,
      gantry::AgentStreamLimitsFor(options.heartbeat_interval_ms,
                                   flags.agent_messages_per_heartbeat,
                                   flags.agent_max_message_bytes));
  grpc::ServerBuilder builder;
  int selected_port = 0;
  if (!flags.listen.empty()) {
    builder.AddListeningPort(flags.listen, *tcp_credentials, &selected_port);
  }
  if (!flags.socket.empty()) {
    builder.AddListeningPort("unix:" + flags.socket,
                             grpc::InsecureServerCredentials());
  }
  builder.RegisterService(&client_service);
  builder.RegisterService(&agent_service);
  // A standby too far behind the log copies this leader's state.
  std::unique_ptr<gantry::replication::SnapshotService> snapshot_service;
  if (replicated) {
    snapshot_service = std::make_unique<gantry::replication::SnapshotService>(
        **store, flags.state_dir);
    snapshot_service->SetToken(replicated->snapshot_token());
    builder.RegisterService(snapshot_service.get());
  }
  // Clients' requests (a job script, a fabric dump): any acceptable
  // submission fits, and gRPC refuses a larger request before allocating
  // it (daemon/controller/submission_size.h). Agent streams have their own,
  // smaller limit (--agent-max-message-bytes).
  builder.SetMaxReceiveMessageSize(
      std::max<int>(static_cast<int>(gantry::limits::kMaxClientRequestBytes),
                    static_cast<int>(flags.agent_max_message_bytes)));
  // Agents' messages are small and steady: bandwidth-delay probing only
  // added a ping round trip for every heartbeat (twice the reads).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // gantryd does not ping its peers (agents ping it, and a silent node is
  // found by its missing heartbeats). With the server-side keepalive timer
  // on, gRPC cancelled and re-armed it on every read: two walks of its
  // timer table per heartbeat (Debian's gRPC keeps that debug table).
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, INT_MAX);
  if (replicated) {
    // Clients and agents of several controllers ping every second or two
    // to notice a frozen leader (cli/client/controller_client.cc,
    // agent/link/controller_link.cc): allow it, where gRPC would answer pings
    // closer than five minutes apart without data with GOAWAY.
    builder.AddChannelArgument(
        GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  }
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  const std::string agent_stream_path = absl::StrCat(
      "/", gantry::v1::AgentService::service_full_name(), "/Connect");
  const std::string submit_stream_path = absl::StrCat(
      "/", gantry::v1::ClientService::service_full_name(), "/SubmitStream");
  auto rpc_metrics = std::make_unique<gantry::RpcMetricsInterceptorFactory>(
      *metrics_registry,
      gantry::RpcMethodPaths({gantry::v1::ClientService::service_full_name(),
                              gantry::v1::AgentService::service_full_name()}),
      std::set<std::string>{agent_stream_path, submit_stream_path});
  agent_service.OnStreamFinished(
      [metrics = rpc_metrics.get(), agent_stream_path](grpc::StatusCode code) {
        metrics->CountHandled(agent_stream_path, code);
      });
  client_service.OnSubmitStreamFinished(
      [metrics = rpc_metrics.get(), submit_stream_path](grpc::StatusCode code) {
        metrics->CountHandled(submit_stream_path, code);
      });
  interceptors.push_back(std::move(rpc_metrics));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || (!flags.listen.empty() && selected_port == 0)) {
    gantry::log::Error("cannot listen",
                       {{"listen", flags.listen}, {"socket", flags.socket}});
    return 1;
  }
  if (!flags.socket.empty()) chmod(flags.socket.c_str(), 0666);
  standby_ports.CloseStandbyPorts();
  std::string host = flags.listen.substr(0, flags.listen.rfind(':'));
  gantry::log::Info(
      "gantryd ready",
      {{"version", GANTRY_VERSION},
       {"listen", host + ":" + std::to_string(selected_port)},
       {"tcp", flags.tls_cert.empty() ? "plain" : "tls"},
       {"socket", flags.socket},
       {"metrics", metrics_endpoint ? metrics_endpoint->address() : ""},
       {"state_dir", flags.state_dir},
       {"pid", static_cast<int>(getpid())}});

  // Under systemd (Type=notify): ready now that the listeners serve; the
  // watchdog pings from the controller's own loop, so a stuck loop gets
  // the daemon restarted.
  gantry::systemd::NotifyReady(
      "serving on " + host + ":" + std::to_string(selected_port) +
      (flags.socket.empty() ? "" : " and ") + flags.socket);
  gantry::LoopWatchdog watchdog(io, gantry::systemd::WatchdogPingInterval(),
                                gantry::systemd::NotifyWatchdog);
  watchdog.Start();

  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  std::thread stopper;
  signals.async_wait([&](const boost::system::error_code&, int signal) {
    gantry::log::Info("stopping", {{"signal", signal}});
    gantry::systemd::NotifyStopping("stopping");
    gantry::replication::StopInsteadOfSteppingDown();
    controller.Stop();
    // Shutdown waits for in-flight calls, which need this loop: run it from
    // another thread and stop the loop when it returns.
    stopper = std::thread([&] {
      server->Shutdown(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
      io.stop();
    });
  });
  io.run();
  if (stopper.joinable()) stopper.join();
  // A clean stop hands over at once instead of after the lease's TTL.
  if (replicated) replicated->leadership().Resign();
  gantry::log::Info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing is meant to throw this far; if something does, it is said
  // (the journal keeps it) and gantryd exits for systemd to restart it,
  // rather than aborting with no word of what was thrown.
  try {
    return RunGantryd(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "gantryd: stopped by an unexpected error: " << error.what()
              << "\n";
  } catch (...) {
    std::cerr << "gantryd: stopped by an unexpected error\n";
  }
  return 1;
}
