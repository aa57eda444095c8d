// The controller's recent node events that an admin looks for in `gantry
// status` (node_down, node_degraded, node_drained), kept in memory as they
// are staged into the event log. The event log on disk keeps them all, by
// node; this keeps the last few across nodes, in time order, so the status
// needs no scan of the store. A restarted controller starts empty.
//
// Not thread-safe: the controller's loop thread owns it.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include "gantry/v1/types.pb.h"

namespace gantry {

class NodeEventLog {
 public:
  explicit NodeEventLog(size_t capacity = 64);

  // Keeps `event` if it is one of the kinds above (and a node event);
  // ignores everything else. The oldest kept event goes when full.
  void Observe(const v1::EventRecord& event);

  // Oldest first.
  std::vector<v1::EventRecord> Events() const;

  static bool IsNotable(const v1::EventRecord& event);

 private:
  size_t capacity_;
  std::deque<v1::EventRecord> events_;
};

}  // namespace gantry
