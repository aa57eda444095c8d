// A StateStore::Batch as the protobuf the log in etcd carries, and back.
// Every field of Batch travels except replication_index, which is the
// entry's place in the log, not its content. Thread-safe (pure).
#pragma once

#include "daemon/store/state_store.h"
#include "gantry/v1/replication.pb.h"

namespace gantry::replication {

v1::ReplicatedBatch ToReplicated(const StateStore::Batch& batch);
StateStore::Batch FromReplicated(v1::ReplicatedBatch replicated);

}  // namespace gantry::replication
