// How a leader that may have been replaced stops acting: it re-executes
// gantryd with its own arguments, so that it starts over as a standby from
// what is durable (its RocksDB and the log in etcd) and forgets everything
// it held in memory as leader. Running ranks are the agents' and are not
// touched; clients and agents redial and find the new leader.
//
// Once gantryd is stopping (StopInsteadOfSteppingDown), a step-down ends
// the process instead: its admin asked it to stop, and a standby started
// over in its place would run on until systemd's SIGKILL.
//
// Thread-safe: the first caller execs; later callers (another thread that
// found out at the same moment) wait for it.
#pragma once

#include <string>

namespace gantry::replication {

[[noreturn]] void StepDown(char** argv, const std::string& reason);

// Called when a stop begins (SIGTERM, SIGINT): a later StepDown exits.
void StopInsteadOfSteppingDown();

}  // namespace gantry::replication
