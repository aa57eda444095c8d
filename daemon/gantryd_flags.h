// gantryd's command-line flags (and the same keys of --config's
// [controller] table): their values with the shipped defaults, and their
// declarations with --help's text. daemon/main.cc checks and uses them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/cluster_name.h"

namespace CLI {
class App;
}  // namespace CLI

namespace gantry {

struct GantrydFlags {
  std::string state_dir = "/var/lib/gantry";
  std::string cluster_name = kDefaultClusterName;
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

// Declares every flag on `app`, bound to `flags`.
void AddGantrydFlags(CLI::App& app, GantrydFlags& flags);

}  // namespace gantry
