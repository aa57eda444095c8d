#include "common/metrics_endpoint.h"

#include <exception>
#include <string>
#include <vector>

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace gantry {
namespace {

// Scrapers are few (a Prometheus or two, an admin's curl): eight threads
// leave room for them beside a handful of stuck connections.
constexpr int kMetricsThreads = 8;
// A scrape's request is a few hundred bytes, sent at once.
constexpr int kRequestTimeoutMs = 3000;

}  // namespace

absl::Status CheckMetricsListen(const std::string& listen) {
  if (listen.empty()) return absl::OkStatus();
  const size_t colon = listen.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", listen, "\" is not IP:PORT"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& listen, std::shared_ptr<prometheus::Registry> registry) {
  if (listen.empty()) return absl::InvalidArgumentError("no address given");
  if (absl::Status valid = CheckMetricsListen(listen); !valid.ok()) {
    return valid;
  }
  const std::string host = listen.substr(0, listen.rfind(':'));
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  endpoint->registry_ = std::move(registry);
  try {
    // civetweb gives each connection a thread of its own until it is
    // answered: with one thread, a single client that sent half a request
    // and went quiet held /metrics from every scraper. Several threads,
    // and a connection that has not sent its request within the timeout
    // is dropped, so idle or slow clients cannot take the port from
    // Prometheus for long.
    endpoint->exposer_ =
        std::make_unique<prometheus::Exposer>(std::vector<std::string>{
            "listening_ports", listen,                       //
            "num_threads", std::to_string(kMetricsThreads),  //
            "request_timeout_ms", std::to_string(kRequestTimeoutMs),
            // Each scrape its own connection: no idle keep-alive holds
            // a thread between scrapes.
            "enable_keep_alive", "no"});
  } catch (const std::exception& error) {
    // civetweb says only that it could not start; the usual cause is a
    // port in use or an address that is not this host's.
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", listen, ": ", error.what()));
  }
  endpoint->exposer_->RegisterCollectable(endpoint->registry_);
  const std::vector<int> ports = endpoint->exposer_->GetListeningPorts();
  if (ports.empty()) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", listen, ": no port bound"));
  }
  endpoint->address_ = absl::StrCat(host, ":", ports.front());
  return endpoint;
}

std::unique_ptr<MetricsEndpoint> MetricsEndpoint::StartOrLogError(
    const std::string& listen, std::shared_ptr<prometheus::Registry> registry) {
  if (listen.empty()) return nullptr;
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      Start(listen, std::move(registry));
  if (endpoint.ok()) return std::move(*endpoint);
  log::Error("metrics endpoint not started",
             {{"listen", listen}, {"error", endpoint.status().ToString()}});
  return nullptr;
}

MetricsEndpoint::~MetricsEndpoint() = default;

}  // namespace gantry
