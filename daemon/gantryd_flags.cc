#include "daemon/gantryd_flags.h"

#include <string>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "daemon/scheduler/partition_config.h"

namespace gantry {

void AddGantrydFlags(CLI::App& app, GantrydFlags& flags) {
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
            absl::StatusOr<PartitionConfig> parsed = ParsePartitionLine(line);
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

}  // namespace gantry
