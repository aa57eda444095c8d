#include "daemon/controller/core/utilization_sampler.h"

#include <chrono>
#include <cstdint>

namespace gantry {
namespace {

constexpr auto kSampleInterval = std::chrono::seconds(5);

}  // namespace

UtilizationSampler::UtilizationSampler(boost::asio::io_context& io,
                                       const Clock& clock,
                                       const ClusterState& state)
    : clock_(clock), state_(state), timer_(io) {}

void UtilizationSampler::Start() {
  stopped_ = false;
  Arm();
}

void UtilizationSampler::Stop() {
  stopped_ = true;
  timer_.cancel();
}

void UtilizationSampler::Sample() {
  uint32_t total = 0, allocated = 0;
  for (const auto& [name, node] : state_.nodes) {
    total += static_cast<uint32_t>(node.record.inventory().gpus_size());
    allocated += static_cast<uint32_t>(node.usage.gpus.size());
  }
  history_.Record(clock_.NowMs(), total, allocated);
}

void UtilizationSampler::Arm() {
  if (stopped_) return;
  Sample();
  timer_.expires_after(kSampleInterval);
  timer_.async_wait([this](const boost::system::error_code& error) {
    if (error || stopped_) return;
    Arm();
  });
}

}  // namespace gantry
