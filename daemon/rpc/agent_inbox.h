// What the agents' streams have read, on its way to the controller's loop.
//
// The gRPC reactors push every message (and the end of each stream) here;
// the loop takes them all at once, in arrival order. A heartbeat, which
// thousands of nodes send every second and nothing waits for, only asks
// for a hand-over within a short gathering delay, so the loop wakes a hundred
// times a second rather than once per heartbeat (each wakeup is a system
// call on both sides). Anything else (a registration, a rank event, a
// stream's end) asks for a hand-over now, which takes the heartbeats queued
// before it along: the order of every stream's messages is kept.
//
// Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "daemon/controller/core/agent_link.h"
#include "gantry/v1/agent.pb.h"

namespace gantry {

class AgentInbox {
 public:
  struct Item {
    std::shared_ptr<AgentLink> link;
    v1::AgentMessage message;
    bool stream_ended = false;  // the stream is over; `message` is empty
    // Why the controller's side cut the stream; empty: it simply ended.
    std::string end_reason;
  };

  // What the pusher must arrange for the loop to take the inbox's items.
  enum class Wake {
    kNone,   // a hand-over is already coming
    kNow,    // post a hand-over now
    kLater,  // hand over after the gathering delay
  };

  Wake Push(Item item);
  // Everything queued, oldest first; the next Push asks for a wake again.
  std::vector<Item> Take();

 private:
  enum class Pending { kNone, kLater, kNow };

  Mutex mutex_;
  std::vector<Item> items_ ABSL_GUARDED_BY(mutex_);
  Pending pending_ ABSL_GUARDED_BY(mutex_) = Pending::kNone;
};

}  // namespace gantry
