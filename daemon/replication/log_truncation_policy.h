// How far the leader may truncate the log in etcd. An entry may go once it
// is in the RocksDB of the leader and of every standby that follows the
// log, and of at least one standby: the log is the only copy of the state
// outside the leader's host until some standby holds it, so with no
// standby nothing is truncated (a destroyed leader disk then loses
// nothing). `retain` entries are kept behind the slowest standby anyway,
// so one that restarts (and is out of the member list for a moment)
// usually catches up from the log rather than by copying the whole state.
// A standby already behind the truncation needs a copy of the leader's
// state whatever is kept, so it holds nothing back.
//
// Pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gantry::replication {

struct TruncationInput {
  uint64_t leader_index = 0;       // the last entry the leader applied
  uint64_t truncated_through = 0;  // what is truncated already
  // The applied index of each live standby (not the leader's own record).
  std::vector<uint64_t> standby_applied;
  uint64_t retain = 0;
};

// The entry to truncate through, or nullopt when nothing more may go.
std::optional<uint64_t> TruncationTarget(const TruncationInput& input);

}  // namespace gantry::replication
