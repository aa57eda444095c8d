#include "daemon/simulator/failure_model.h"

#include <algorithm>
#include <cmath>

namespace gantry::sim {

std::vector<FailureKind> Llama3FailureMix() {
  using enum FaultClass;
  // Counts from the Llama 3 paper's table 5 (see the header). A software
  // bug or a dependency crashes the job on healthy nodes; an NCCL watchdog
  // timeout is a hang; "host maintenance" is unplanned maintenance that
  // takes the node out; the rest are hardware.
  return {
      {"faulty GPU", 148, kHardware},
      {"GPU HBM3 memory", 72, kHardware},
      {"software bug", 54, kSoftware},
      {"network switch/cable", 35, kHardware},
      {"host maintenance", 32, kHardware},
      {"GPU SRAM memory", 19, kHardware},
      {"GPU system processor", 17, kHardware},
      {"NIC", 7, kHardware},
      {"NCCL watchdog timeout", 7, kHang},
      {"silent data corruption", 6, kHardware},
      {"GPU thermal interface/sensor", 6, kHardware},
      {"SSD", 3, kHardware},
      {"power supply", 2, kHardware},
      {"server chassis", 2, kHardware},
      {"IO expansion board", 2, kHardware},
      {"dependency", 2, kSoftware},
      {"CPU", 2, kHardware},
      {"system memory", 2, kHardware},
  };
}

absl::Status ValidateFailureModel(const FailureModel& model) {
  auto bad_rate = [](double r) { return !(r >= 0) || !std::isfinite(r); };
  if (bad_rate(model.node_rate_per_hour) ||
      bad_rate(model.leaf_rate_per_hour)) {
    return absl::InvalidArgumentError("failure rates must be finite and >= 0");
  }
  double total = 0;
  for (const FailureKind& kind : model.mix) {
    if (!(kind.weight >= 0) || !std::isfinite(kind.weight)) {
      return absl::InvalidArgumentError("failure mix: negative weight for " +
                                        kind.name);
    }
    total += kind.weight;
  }
  if (model.node_rate_per_hour > 0 && !(total > 0)) {
    return absl::InvalidArgumentError(
        "failure mix: no kind with a positive weight");
  }
  return absl::OkStatus();
}

ModelFailureSource::ModelFailureSource(const FailureModel& model,
                                       const ClusterShape& shape,
                                       int64_t start_ms)
    : model_(model), shape_(shape), rng_(model.seed), start_ms_(start_ms) {
  node_total_ = model_.node_rate_per_hour * shape_.nodes;
  leaf_total_ = model_.leaf_rate_per_hour * shape_.Leaves();
  std::vector<double> weights;
  for (const FailureKind& kind : model_.mix) weights.push_back(kind.weight);
  if (weights.empty()) weights.push_back(1);
  pick_kind_ =
      std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
}

FailureEvent ModelFailureSource::Next() {
  FailureEvent event;
  const double total = node_total_ + leaf_total_;
  if (!(total > 0)) {
    event.time_ms = INT64_MAX;
    return event;
  }
  // The superposition of all nodes' and leaves' Poisson processes: one
  // exponential gap at the total rate, then which process fired.
  now_h_ += std::exponential_distribution<double>(total)(rng_);
  event.time_ms =
      start_ms_ + static_cast<int64_t>(std::llround(now_h_ * 3.6e6));
  const double which = std::uniform_real_distribution<double>(0, total)(rng_);
  if (which < node_total_) {
    event.nodes.push_back(static_cast<uint32_t>(
        std::uniform_int_distribution<uint32_t>(0, shape_.nodes - 1)(rng_)));
    const FailureKind& kind = model_.mix[pick_kind_(rng_)];
    event.kind = kind.name;
    event.fault = kind.fault;
  } else {
    const uint32_t leaf =
        std::uniform_int_distribution<uint32_t>(0, shape_.Leaves() - 1)(rng_);
    const uint32_t first = leaf * shape_.nodes_per_leaf;
    const uint32_t last = std::min(shape_.nodes, first + shape_.nodes_per_leaf);
    for (uint32_t n = first; n < last; ++n) event.nodes.push_back(n);
    event.kind = "leaf switch";
    event.fault = FaultClass::kHardware;
    event.correlated = true;
  }
  return event;
}

ListFailureSource::ListFailureSource(std::vector<FailureEvent> events)
    : events_(std::move(events)) {
  std::stable_sort(events_.begin(), events_.end(),
                   [](const FailureEvent& a, const FailureEvent& b) {
                     return a.time_ms < b.time_ms;
                   });
}

FailureEvent ListFailureSource::Next() {
  if (next_ >= events_.size()) {
    FailureEvent none;
    none.time_ms = INT64_MAX;
    return none;
  }
  return events_[next_++];
}

std::string_view FaultClassName(FaultClass fault) {
  switch (fault) {
    case FaultClass::kHardware:
      return "hardware";
    case FaultClass::kSoftware:
      return "software";
    case FaultClass::kHang:
      return "hang";
  }
  return "?";
}

}  // namespace gantry::sim
