#include "daemon/replication/etcd_transport.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/client_certificate.h"
#include "common/log.h"

namespace gantry::replication {
namespace {

constexpr char kHowToSecure[] =
    "give --etcd-ca, --etcd-cert and --etcd-key (etcd-key readable by "
    "gantryd only; gantry-etcd-setup certs makes them, docs/admin-guide.md "
    "\"An HA pair, step by step\")";

}  // namespace

absl::StatusOr<EtcdTransport> EtcdTransportFor(
    const std::vector<std::string>& endpoints, const EtcdTlsOptions& options) {
  const int given = !options.ca_path.empty() + !options.cert_path.empty() +
                    !options.key_path.empty();
  if (given == 0) {
    for (const std::string& endpoint : endpoints) {
      if (absl::StartsWith(endpoint, "https://")) {
        return absl::InvalidArgumentError(absl::StrCat(
            "etcd endpoint ", endpoint, " speaks TLS: ", kHowToSecure));
      }
    }
    if (!options.insecure) {
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing to speak to etcd without TLS: whoever can reach etcd's "
          "client port could then read every job's script and make the "
          "leader run jobs as any user; ",
          kHowToSecure,
          ", or --etcd-insecure where etcd is reachable only by the "
          "controllers"));
    }
    log::Warn(
        "speaking to etcd without TLS (--etcd-insecure): anyone who can "
        "reach etcd's client port can read every job's script and "
        "environment from the log and write entries the leader applies "
        "(a job as root, say); use --etcd-ca, --etcd-cert and --etcd-key "
        "with etcd's --client-cert-auth");
    return EtcdTransport{};
  }
  if (options.insecure) {
    return absl::InvalidArgumentError(
        "--etcd-insecure cannot go with --etcd-ca, --etcd-cert and "
        "--etcd-key: give one or the other");
  }
  if (given != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TLS to etcd needs all of --etcd-ca (the CA that signed etcd's "
        "certificates), --etcd-cert and --etcd-key (gantryd's client "
        "certificate, CN=gantry, and its key); missing: ",
        options.ca_path.empty() ? "--etcd-ca " : "",
        options.cert_path.empty() ? "--etcd-cert " : "",
        options.key_path.empty() ? "--etcd-key" : ""));
  }
  for (const std::string& endpoint : endpoints) {
    if (absl::StartsWith(endpoint, "http://")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "etcd endpoint ", endpoint,
          " is plain http:// but --etcd-ca is set: write it as HOST:PORT "
          "or https://HOST:PORT"));
    }
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MutualTlsChannelCredentials(options.ca_path, options.cert_path,
                                  options.key_path);
  if (!credentials.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("etcd TLS (--etcd-ca, --etcd-cert, --etcd-key): ",
                     credentials.status().message()));
  }
  return EtcdTransport{.credentials = std::move(*credentials), .tls = true};
}

}  // namespace gantry::replication
