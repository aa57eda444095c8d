// The [client] table of the cluster's config file (/etc/gantry/gantry.toml,
// or the file $GANTRY_CONFIG names), so that a login host knows its cluster
// as Slurm's clients know it from slurm.conf:
//
//   [client]
//   controller = "gantry-ctl:6817"        # or "unix:/run/gantry/gantryd.sock"
//   # controller = ["ctl-a:6817", "ctl-b:6817"]  (replicated: the leader)
//   tls-ca = "/etc/gantry/ca.pem"
//   tls-server-name = "gantry-ctl"
//
// Precedence for each setting: the command-line flag, then the environment
// (GANTRY_CONTROLLER, GANTRY_TLS_CA, GANTRY_TLS_SERVER_NAME), then this
// file, then the built-in default. Not thread-safe (sets the environment).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry::cli {

inline constexpr char kConfigPathVariable[] = "GANTRY_CONFIG";
inline constexpr char kDefaultConfigPath[] = "/etc/gantry/gantry.toml";

struct ClientConfig {
  std::vector<std::string> controllers;  // in the order listed
  std::string tls_ca;
  std::string tls_server_name;
};

// $GANTRY_CONFIG, else the installed path.
std::string ClientConfigPath();

// Reads the [client] table of `path`. A missing file is an empty config (a
// machine without Gantry's package). Errors: INVALID_ARGUMENT naming the
// file and line (syntax, unknown table or key, wrong type, an empty
// controller address).
absl::StatusOr<ClientConfig> LoadClientConfig(const std::string& path);

// Loads ClientConfigPath() and puts its settings into the environment the
// controller client reads, where the environment does not already set them
// (so a variable wins over the file; a flag, applied later, wins over both).
absl::Status ApplyClientConfig();

}  // namespace gantry::cli
