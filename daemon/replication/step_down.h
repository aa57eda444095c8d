// How a leader that may have been replaced stops acting: it re-executes
// gantryd with its own arguments, so that it starts over as a standby from
// what is durable (its RocksDB and the log in etcd) and forgets everything
// it held in memory as leader. Running ranks are the agents' and are not
// touched; clients and agents redial and find the new leader.
//
// Thread-safe: the first caller execs; later callers (another thread that
// found out at the same moment) wait for it.
#pragma once

#include <string>

namespace gantry::replication {

[[noreturn]] void StepDown(char** argv, const std::string& reason);

}  // namespace gantry::replication
