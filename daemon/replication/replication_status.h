// The replication part of `gantry status`, as the leader sees it: every
// controller's member record in etcd (role, address, applied index, so its
// lag), and each etcd member's health. Asking etcd costs a round trip per
// member, so an answer is reused for a second.
//
// Thread-safe: Get from any gRPC thread (it blocks for at most the etcd
// call timeout; never call it on the controller's loop).
#pragma once

#include <chrono>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "daemon/replication/replicated_controller.h"
#include "gantry/v1/client.pb.h"

namespace gantry::replication {

class ReplicationStatusSource {
 public:
  explicit ReplicationStatusSource(ReplicatedController& controller)
      : controller_(controller) {}

  v1::ReplicationStatus Get();

 private:
  // Under the lock: concurrent callers wait for one answer from etcd
  // rather than each asking it.
  v1::ReplicationStatus Read() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  ReplicatedController& controller_;
  Mutex mutex_;
  v1::ReplicationStatus cached_ ABSL_GUARDED_BY(mutex_);
  std::chrono::steady_clock::time_point cached_at_ ABSL_GUARDED_BY(mutex_) = {};
};

}  // namespace gantry::replication
