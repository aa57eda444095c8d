#include "agent/datasets/dataset_cache_requests.h"

#include <chrono>
#include <limits>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/datasets/dataset_stager.h"
#include "agent/datasets/dataset_version_by.h"
#include "common/dataset_spec.h"
#include "common/log.h"

namespace gantry::agent {
namespace {

v1::DatasetCacheResult RequestFailed(uint64_t request_id, std::string message) {
  v1::DatasetCacheResult result;
  result.set_request_id(request_id);
  result.set_ok(false);
  result.set_message(std::move(message));
  return result;
}

}  // namespace

DatasetCacheRequests::DatasetCacheRequests(DatasetCache* cache,
                                           std::string cache_problem,
                                           DatasetCacheRequestsOptions options,
                                           Clock& clock, Answer answer)
    : cache_(cache),
      cache_problem_(std::move(cache_problem)),
      options_(std::move(options)),
      clock_(clock),
      answer_(std::move(answer)) {}

DatasetCacheRequests::~DatasetCacheRequests() {
  MutexLock lock(mutex_);
  idle_.Wait(lock, [this] {
    mutex_.AssertHeld();
    return running_ == 0;
  });
}

void DatasetCacheRequests::RunDetached(
    std::function<v1::DatasetCacheResult()> work) {
  {
    MutexLock lock(mutex_);
    ++running_;
  }
  std::thread([this, work = std::move(work)] {
    answer_(work());
    MutexLock lock(mutex_);
    --running_;
    idle_.NotifyAll();
  }).detach();
}

void DatasetCacheRequests::Prefetch(v1::DatasetPrefetch request) {
  MutexLock lock(mutex_);
  queued_.push_back({std::move(request), clock_.NowMs()});
  if (prefetchers_ >= kMaxPrefetchers) return;
  ++prefetchers_;
  ++running_;
  std::thread([this] { RunQueuedPrefetches(); }).detach();
}

void DatasetCacheRequests::RunQueuedPrefetches() {
  MutexLock lock(mutex_);
  while (!queued_.empty()) {
    Queued next = std::move(queued_.front());
    queued_.pop_front();
    lock.Unlock();
    answer_(PrefetchArrived(next.request, next.received_ms));
    lock.Lock();
  }
  --prefetchers_;
  --running_;
  idle_.NotifyAll();
}

void DatasetCacheRequests::Evict(v1::DatasetEvict request) {
  RunDetached(
      [this, request = std::move(request)] { return EvictNow(request); });
}

absl::StatusOr<DatasetUser> DatasetCacheRequests::UserOf(
    const v1::DatasetPrefetch& request) const {
  if (request.uid() == 0) {
    // A copy as root would read what no user may; the owner is who asks
    // for it, or whose job it is.
    return absl::PermissionDeniedError(
        "a dataset is not prefetched as root (uid 0): name its owner");
  }
  IdentityRequest identity_request;
  identity_request.uid = request.uid();
  identity_request.gid = request.gid();
  identity_request.user = request.user();
  identity_request.node = options_.node_name;
  identity_request.agent_is_root = options_.agent_is_root;
  identity_request.agent_uid = options_.agent_uid;
  absl::StatusOr<RankIdentity> identity =
      ResolveRankIdentity(identity_request, *options_.users);
  if (!identity.ok()) return identity.status();
  return DatasetUserOf(*identity);
}

v1::DatasetCacheResult DatasetCacheRequests::PrefetchNow(
    const v1::DatasetPrefetch& request) {
  return PrefetchArrived(request, clock_.NowMs());
}

v1::DatasetCacheResult DatasetCacheRequests::PrefetchArrived(
    const v1::DatasetPrefetch& request, int64_t received_ms) {
  const v1::DatasetRef& dataset = request.dataset();
  const std::string what =
      absl::StrCat("dataset ", dataset.name(), " on node ", options_.node_name);
  if (cache_ == nullptr) {
    return RequestFailed(
        request.request_id(),
        absl::StrCat("node ", options_.node_name,
                     " has no usable dataset cache: ", cache_problem_));
  }
  // The name becomes a path in the cache, the path is read as the user:
  // both as strict as a job's --dataset.
  for (const absl::Status& status :
       {CheckDatasetName(dataset.name()), CheckDatasetPath(dataset.path())}) {
    if (!status.ok()) {
      return RequestFailed(request.request_id(),
                           absl::StrCat(what, ": ", status.message()));
    }
  }
  absl::StatusOr<DatasetUser> user = UserOf(request);
  if (!user.ok()) {
    return RequestFailed(request.request_id(),
                         absl::StrCat(what, ": ", user.status().message()));
  }
  log::Info("prefetching dataset", {{"dataset", dataset.name()},
                                    {"path", dataset.path()},
                                    {"user", user->name},
                                    {"job", request.job_id()}});
  const auto started = std::chrono::steady_clock::now();
  // Saturated: a hold past the end of time is one that never lapses.
  const int64_t hold_until_ms =
      request.hold_ms() > std::numeric_limits<int64_t>::max() - received_ms
          ? std::numeric_limits<int64_t>::max()
          : received_ms + request.hold_ms();
  absl::StatusOr<StagedDataset> staged =
      cache_->Prefetch(request.job_id(), hold_until_ms, *user, dataset.name(),
                       dataset.path(), {}, VersionByOf(dataset));
  if (!staged.ok()) {
    log::Warn("dataset prefetch failed",
              {{"dataset", dataset.name()},
               {"job", request.job_id()},
               {"error", std::string(staged.status().message())}});
    return RequestFailed(request.request_id(),
                         absl::StrCat(what, ": ", staged.status().message()));
  }
  LogStaged("dataset prefetched", request.job_id(), dataset.name(), *staged,
            started);
  v1::DatasetCacheResult result;
  result.set_request_id(request.request_id());
  result.set_ok(true);
  result.set_version(staged->version);
  result.set_bytes_total(staged->bytes_total);
  result.set_bytes_copied(staged->bytes_copied);
  result.set_hit(staged->hit);
  return result;
}

v1::DatasetCacheResult DatasetCacheRequests::EvictNow(
    const v1::DatasetEvict& request) {
  if (cache_ == nullptr) {
    return RequestFailed(
        request.request_id(),
        absl::StrCat("node ", options_.node_name,
                     " has no usable dataset cache: ", cache_problem_));
  }
  if (absl::Status name = CheckDatasetName(request.name()); !name.ok()) {
    return RequestFailed(
        request.request_id(),
        absl::StrCat("cannot evict on node ", options_.node_name, ": ",
                     name.message()));
  }
  const absl::Status evicted =
      cache_->Evict(request.owner_uid(), request.name());
  if (evicted.ok()) {
    log::Info("dataset evicted",
              {{"dataset", request.name()}, {"uid", request.owner_uid()}});
    v1::DatasetCacheResult result;
    result.set_request_id(request.request_id());
    result.set_ok(true);
    return result;
  }
  // Not cached, or in use: the cache's sentence says which and whose.
  if (absl::IsNotFound(evicted) || absl::IsFailedPrecondition(evicted)) {
    return RequestFailed(
        request.request_id(),
        absl::StrCat(evicted.message(), " on node ", options_.node_name));
  }
  return RequestFailed(
      request.request_id(),
      absl::StrCat("dataset ", request.name(), " of uid ", request.owner_uid(),
                   " on node ", options_.node_name, ": ", evicted.message()));
}

}  // namespace gantry::agent
