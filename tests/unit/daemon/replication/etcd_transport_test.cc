// gantryd's choice of how to speak to etcd: TLS with a client certificate,
// or plain gRPC only when told --etcd-insecure; every half-way setting is
// refused with the flag to give. (Certificates that work are tried
// against a real etcd in tests/integration/test_etcd_security.py.)
#include <catch2/catch.hpp>
#include <string>

#include "daemon/replication/etcd_transport.h"

namespace gantry::replication {
namespace etcd_transport_test {

EtcdTlsOptions Options(std::string ca, std::string cert, std::string key,
                       bool insecure = false) {
  EtcdTlsOptions options;
  options.ca_path = std::move(ca);
  options.cert_path = std::move(cert);
  options.key_path = std::move(key);
  options.insecure = insecure;
  return options;
}

const EtcdTlsOptions kInsecure = Options("", "", "", true);

std::string Refusal(const std::vector<std::string>& endpoints,
                    const EtcdTlsOptions& options) {
  absl::StatusOr<EtcdTransport> transport =
      EtcdTransportFor(endpoints, options);
  REQUIRE_FALSE(transport.ok());
  CHECK(transport.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(transport.status().message());
}

TEST_CASE("Plain etcd needs --etcd-insecure") {
  CHECK_THAT(Refusal({"etcd1:2379"}, {}),
             Catch::Contains("refusing to speak to etcd without TLS") &&
                 Catch::Contains("--etcd-insecure"));
  absl::StatusOr<EtcdTransport> insecure =
      EtcdTransportFor({"http://etcd1:2379"}, kInsecure);
  REQUIRE(insecure.ok());
  CHECK_FALSE(insecure->tls);
}

TEST_CASE("An https endpoint needs the TLS files") {
  CHECK_THAT(Refusal({"https://etcd1:2379"}, kInsecure),
             Catch::Contains("speaks TLS: give --etcd-ca, --etcd-cert and "
                             "--etcd-key"));
}

TEST_CASE("Half the TLS settings are refused, naming what is missing") {
  CHECK_THAT(Refusal({"etcd1:2379"}, Options("/ca.pem", "", "")),
             Catch::Contains("missing: --etcd-cert --etcd-key"));
  CHECK_THAT(Refusal({"etcd1:2379"}, {.ca_path = "/ca.pem",
                                      .cert_path = "/gantry.pem",
                                      .key_path = "/gantry.key",
                                      .insecure = true}),
             Catch::Contains("--etcd-insecure cannot go with"));
  CHECK_THAT(Refusal({"http://etcd1:2379"},
                     Options("/ca.pem", "/gantry.pem", "/gantry.key")),
             Catch::Contains("is plain http:// but --etcd-ca is set"));
}

TEST_CASE("A missing TLS file is named, with the flags it comes from") {
  const std::string refusal = Refusal(
      {"etcd1:2379"}, Options("/nonexistent/ca.pem", "/nonexistent/g.pem",
                              "/nonexistent/g.key"));
  CHECK_THAT(refusal, Catch::Contains("/nonexistent/ca.pem"));
  CHECK_THAT(refusal, Catch::Contains("--etcd-key"));
}

}  // namespace etcd_transport_test
}  // namespace gantry::replication
