// The leader's housekeeping of the log in etcd: every few seconds it reads
// the member records, truncates what every following controller holds
// (log_truncation_policy.h), and compacts etcd's history of what the
// previous pass deleted, so etcd's database stops growing with every
// commit. A compaction a pass late leaves a standby whose watch is a
// moment behind time to read on without starting over.
//
// Threading: a thread of its own between Start and Stop (or destruction);
// truncated_through() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/mutex.h"
#include "daemon/replication/etcd_client.h"
#include "daemon/replication/replication_log.h"

namespace gantry::replication {

class LogTruncator {
 public:
  struct Options {
    std::string self_name;  // this leader's member name
    uint64_t retain = 10'000;
    std::chrono::milliseconds interval{5000};
  };
  // `leader_index`: the last entry this leader applied; `leader_revision`:
  // its leader key's creation revision (the truncation's fence).
  LogTruncator(EtcdClient& etcd, ReplicationLog& log, Options options,
               std::function<uint64_t()> leader_index, int64_t leader_revision);
  ~LogTruncator();
  LogTruncator(const LogTruncator&) = delete;
  LogTruncator& operator=(const LogTruncator&) = delete;

  void Start();
  void Stop();

  // One pass (Start's thread runs these). Errors: etcd's; a deposed
  // leader's FAILED_PRECONDITION.
  absl::Status Pass();

  uint64_t truncated_through() const { return truncated_through_.load(); }

 private:
  void Loop();

  EtcdClient& etcd_;
  ReplicationLog& log_;
  const Options options_;
  const std::function<uint64_t()> leader_index_;
  const int64_t leader_revision_;

  std::atomic<uint64_t> truncated_through_{0};
  bool mark_read_ = false;    // Pass's thread only
  int64_t compact_next_ = 0;  // Pass's thread only: 0 none

  Mutex mutex_;
  CondVar wake_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace gantry::replication
