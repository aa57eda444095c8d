#include "daemon/controller/core/node_event_log.h"

#include <algorithm>

namespace gantry {

NodeEventLog::NodeEventLog(size_t capacity)
    : capacity_(std::max<size_t>(1, capacity)) {}

bool NodeEventLog::IsNotable(const v1::EventRecord& event) {
  if (event.job_id() != 0 || event.node().empty()) return false;
  const std::string& kind = event.kind();
  return kind == "node_down" || kind == "node_degraded" ||
         kind == "node_drained";
}

void NodeEventLog::Observe(const v1::EventRecord& event) {
  if (!IsNotable(event)) return;
  events_.push_back(event);
  if (events_.size() > capacity_) events_.pop_front();
}

std::vector<v1::EventRecord> NodeEventLog::Events() const {
  return {events_.begin(), events_.end()};
}

}  // namespace gantry
