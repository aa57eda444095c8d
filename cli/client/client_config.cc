#include "cli/client/client_config.h"

#include <cstdlib>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client/controller_client.h"
#include "common/config_file.h"
#include "common/tls_credentials.h"

namespace gantry::cli {

std::string ClientConfigPath() {
  const char* path = std::getenv(kConfigPathVariable);
  return path != nullptr && *path != '\0' ? path : kDefaultConfigPath;
}

absl::StatusOr<ClientConfig> LoadClientConfig(const std::string& path) {
  static const std::set<std::string> kKeys = {"controller", "tls-ca",
                                              "tls-server-name"};
  absl::StatusOr<std::vector<ConfigFlag>> flags =
      ConfigFileToFlags(path, "client", kKeys);
  if (absl::IsNotFound(flags.status())) return ClientConfig{};
  if (!flags.ok()) return flags.status();
  ClientConfig config;
  for (const ConfigFlag& flag : *flags) {
    // words: {"--key=value"}, or {"--key", ""} for an empty string.
    const std::string& word = flag.words[0];
    const std::size_t equals = word.find('=');
    const std::string value =
        equals == std::string::npos ? "" : word.substr(equals + 1);
    if (flag.key == "controller") {
      if (value.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ":", flag.line,
            ": key \"controller\" in [client] is empty; give HOST:PORT or "
            "unix:PATH"));
      }
      config.controllers.push_back(value);
    } else if (flag.key == "tls-ca") {
      config.tls_ca = value;
    } else {
      config.tls_server_name = value;
    }
  }
  return config;
}

absl::Status ApplyClientConfig() {
  absl::StatusOr<ClientConfig> config = LoadClientConfig(ClientConfigPath());
  if (!config.ok()) return config.status();
  const std::pair<const char*, std::string> settings[] = {
      // Several: the controllers of a replicated cluster; the CLI follows
      // the leader among them (cli/client/controller_client.h).
      {kControllerVariable, absl::StrJoin(config->controllers, ",")},
      {kTlsCaVariable, config->tls_ca},
      {kTlsServerNameVariable, config->tls_server_name},
  };
  for (const auto& [variable, value] : settings) {
    const char* set = std::getenv(variable);
    if (!value.empty() && (set == nullptr || *set == '\0')) {
      setenv(variable, value.c_str(), 1);
    }
  }
  return absl::OkStatus();
}

}  // namespace gantry::cli
