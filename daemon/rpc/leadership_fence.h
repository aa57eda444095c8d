// Whether this gantryd may still act as the controller: always, for the
// embedded default; for a replicated controller (--etcd), only while its
// etcd lease is surely held (daemon/replication/leadership.h). Checked
// before anything goes out to an agent, so a leader resumed after a pause
// longer than its lease launches and kills nothing before it steps down
// (the agent's stream is ended rather than a message dropped: the agent
// registers again and nothing it missed is lost; grpc_services.cc).
//
// Thread-safe: set once before the server starts, read from any thread.
#pragma once

#include <functional>

namespace gantry {

// `held` must be callable from any thread; unset: always held.
void SetLeadershipFence(std::function<bool()> held);
bool LeadershipHeld();

}  // namespace gantry
