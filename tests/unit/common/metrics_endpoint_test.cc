// The /metrics endpoint: which addresses are accepted, and that the port
// reported is the one bound.
#include "common/metrics_endpoint.h"

#include <prometheus/registry.h>
#include <catch2/catch.hpp>

namespace gantry {
namespace metrics_endpoint_test {

TEST_CASE("the metrics address is IP:PORT or nothing", "[metrics]") {
  CHECK(CheckMetricsListen("").ok());
  CHECK(CheckMetricsListen("0.0.0.0:9817").ok());
  CHECK(CheckMetricsListen("127.0.0.1:0").ok());
  CHECK(CheckMetricsListen("[::]:9817").ok());
  CHECK(absl::IsInvalidArgument(CheckMetricsListen("9817")));
  CHECK(absl::IsInvalidArgument(CheckMetricsListen(":9817")));
  CHECK(absl::IsInvalidArgument(CheckMetricsListen("127.0.0.1:")));
  CHECK(absl::IsInvalidArgument(CheckMetricsListen("127.0.0.1:http")));
  CHECK(absl::IsInvalidArgument(CheckMetricsListen("127.0.0.1:65536")));
}

TEST_CASE("port 0 binds a free port, which is reported", "[metrics]") {
  auto registry = std::make_shared<prometheus::Registry>();
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> first =
      MetricsEndpoint::Start("127.0.0.1:0", registry);
  REQUIRE(first.ok());
  const std::string address = (*first)->address();
  CHECK(address.rfind("127.0.0.1:", 0) == 0);
  CHECK(address != "127.0.0.1:0");
  // The reported port really is taken.
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> second =
      MetricsEndpoint::Start(address, registry);
  CHECK(absl::IsUnavailable(second.status()));
}

}  // namespace metrics_endpoint_test
}  // namespace gantry
