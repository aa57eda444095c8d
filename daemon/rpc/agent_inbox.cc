#include "daemon/rpc/agent_inbox.h"

#include <utility>

namespace gantry {

AgentInbox::Wake AgentInbox::Push(Item item) {
  const bool urgent = item.stream_ended || !item.message.has_heartbeat();
  MutexLock lock(mutex_);
  items_.push_back(std::move(item));
  switch (pending_) {
    case Pending::kNow:
      return Wake::kNone;
    case Pending::kLater:
      if (!urgent) return Wake::kNone;
      pending_ = Pending::kNow;
      return Wake::kNow;
    case Pending::kNone:
      pending_ = urgent ? Pending::kNow : Pending::kLater;
      return urgent ? Wake::kNow : Wake::kLater;
  }
  return Wake::kNow;
}

std::vector<AgentInbox::Item> AgentInbox::Take() {
  std::vector<Item> taken;
  MutexLock lock(mutex_);
  taken.swap(items_);
  pending_ = Pending::kNone;
  return taken;
}

}  // namespace gantry
