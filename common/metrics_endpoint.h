// An HTTP endpoint that serves one Prometheus registry at /metrics, for
// gantryd and gantry-agent (--metrics-listen). Clients that connect and
// idle (half a request, or none) cannot keep it from other scrapers: it
// has several HTTP threads and drops a connection whose request does not
// arrive within a few seconds.
//
// Thread-safety: the endpoint's own HTTP threads read the registry while the
// daemon updates it; prometheus-cpp metrics are safe for that. Create it
// after the daemon has set its signal mask, since its threads inherit it.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace prometheus {
class Exposer;
class Registry;
}  // namespace prometheus

namespace gantry {

// OK for "" (no endpoint) and for a well-formed IP:PORT; INVALID_ARGUMENT
// otherwise, so a daemon can refuse the flag before it starts anything.
absl::Status CheckMetricsListen(const std::string& listen);

class MetricsEndpoint {
 public:
  // Listens on `listen`, "IP:PORT" ("[::]:PORT" for IPv6; port 0: any free
  // port). Errors: INVALID_ARGUMENT for a malformed address, UNAVAILABLE
  // when the address cannot be bound (in use, not local).
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& listen,
      std::shared_ptr<prometheus::Registry> registry);
  // Start for a daemon that goes on without its monitoring port: null
  // for "" (off) and, after logging why, when the endpoint cannot start.
  static std::unique_ptr<MetricsEndpoint> StartOrLogError(
      const std::string& listen,
      std::shared_ptr<prometheus::Registry> registry);
  ~MetricsEndpoint();

  // The address served, with the port actually bound ("127.0.0.1:43117").
  const std::string& address() const { return address_; }

 private:
  MetricsEndpoint() = default;

  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string address_;
};

}  // namespace gantry
