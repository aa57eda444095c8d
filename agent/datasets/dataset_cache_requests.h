// Carries out the controller's requests on the node's dataset cache:
// DatasetPrefetch (`gantry cache prefetch`, or a waiting job's datasets
// staged ahead onto its reserved nodes) and DatasetEvict (`gantry cache
// evict`), each answered with exactly one DatasetCacheResult of the same
// request_id.
//
// A prefetch stages as a launch does: the request's uid must be its user in
// this node's user database (ResolveRankIdentity, as for LaunchRanks; root
// is refused: a prefetch names the dataset's owner), and the cache's worker
// (in the agent, a helper process running as the user) scans, copies into
// the same ROOT/<uid>/<name>.<version>.partial path and verifies, so an
// interrupted prefetch resumes as an interrupted launch's stage does. One
// made for a waiting job (job_id != 0) holds the copy for that job for at
// most hold_ms from its arrival (DatasetCache::Prefetch). An eviction drops
// the owner's unpinned copies, removed with the owner's credentials.
//
// At most kMaxPrefetchers prefetches copy at once; the others wait their
// turn in arrival order (a burst of requests, from staging ahead for many
// waiting jobs, must not start a copy of each at once on one disk).
// Evictions never wait behind them.
//
// Thread-safe: Prefetch and Evict may be called from any thread (the
// agent's message thread) and return at once; the work runs on detached
// threads of this object's own, the answer is called from them, and the
// destructor waits for them all (queued prefetches included). PrefetchNow
// and EvictNow do the work on the caller's thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "agent/datasets/dataset_cache.h"
#include "agent/launch/rank_identity.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "gantry/v1/agent.pb.h"

namespace gantry::agent {

struct DatasetCacheRequestsOptions {
  std::string node_name;  // for messages
  // Who the agent is: root acts as the request's user, anyone else as
  // itself (as for ranks, rank_identity.h).
  bool agent_is_root = true;
  uid_t agent_uid = 0;
  const UserDatabase* users = nullptr;  // the node's; must outlive this
};

class DatasetCacheRequests {
 public:
  using Answer = std::function<void(const v1::DatasetCacheResult&)>;

  // `cache` may be null (no usable cache on this node: every request is
  // answered ok=false with `cache_problem`). `cache`, `clock` and `users`
  // must outlive this.
  DatasetCacheRequests(DatasetCache* cache, std::string cache_problem,
                       DatasetCacheRequestsOptions options, Clock& clock,
                       Answer answer);
  ~DatasetCacheRequests();

  static constexpr int kMaxPrefetchers = 2;

  // Runs the request off the caller's thread, then answers it. A prefetch's
  // hold counts from here, however long it waits its turn.
  void Prefetch(v1::DatasetPrefetch request);
  void Evict(v1::DatasetEvict request);

  // The work and the answer, on the caller's thread.
  v1::DatasetCacheResult PrefetchNow(const v1::DatasetPrefetch& request);
  v1::DatasetCacheResult EvictNow(const v1::DatasetEvict& request);

 private:
  // Runs `work` on a thread of its own and answers with what it returns.
  void RunDetached(std::function<v1::DatasetCacheResult()> work);
  v1::DatasetCacheResult PrefetchArrived(const v1::DatasetPrefetch& request,
                                         int64_t received_ms);
  // A prefetcher thread: runs queued prefetches until none is left.
  void RunQueuedPrefetches();
  // The user to stage as, or why not.
  absl::StatusOr<DatasetUser> UserOf(const v1::DatasetPrefetch& request) const;

  DatasetCache* const cache_;
  const std::string cache_problem_;
  const DatasetCacheRequestsOptions options_;
  Clock& clock_;
  const Answer answer_;
  Mutex mutex_;
  CondVar idle_;
  int running_ ABSL_GUARDED_BY(mutex_) = 0;
  struct Queued {
    v1::DatasetPrefetch request;
    int64_t received_ms = 0;
  };
  std::deque<Queued> queued_ ABSL_GUARDED_BY(mutex_);
  int prefetchers_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace gantry::agent
