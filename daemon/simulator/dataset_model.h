// Datasets for trace jobs in gantry-sim, and the nodes' dataset caches.
// Traces name no datasets, so a model attaches them: each fair-share user
// (a Philly VC, an Acme user, ...) owns a few datasets of log-uniform sizes,
// and each job reads one of its user's, the first ones more often (Zipf);
// everything is drawn from --seed, the user's name and the job's id, so a
// run is the same on every machine. Each node keeps what its jobs read in a
// cache of fixed size with least-recently-used eviction that never evicts a
// dataset a running job on that node reads. Pure; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "daemon/scheduler/scheduler_types.h"
#include "daemon/simulator/trace_reader.h"

namespace gantry::sim {

struct DatasetModelConfig {
  uint32_t datasets_per_user = 4;
  double min_gb = 20;      // dataset sizes, log-uniform in [min_gb, max_gb]
  double max_gb = 2000;    // (1 GB = 1e9 bytes)
  double zipf = 1.0;       // the user's k-th dataset is read ~ 1 / k^zipf
  double job_share = 1;    // the share of jobs that read a dataset
  double cache_gb = 4000;  // per node
  uint64_t seed = 1;
};

// INVALID_ARGUMENT naming the flag for a value out of range.
absl::Status ValidateDatasetModel(const DatasetModelConfig& config);

// The dataset a job reads, or none (job_share). The key's owner uid is a
// hash of the user's name, its path "/datasets/<user>/<k>".
std::optional<DatasetNeed> DatasetOf(const DatasetModelConfig& config,
                                     const TraceJob& job);

// Every node's cache.
class NodeCaches {
 public:
  NodeCaches(std::size_t nodes, uint64_t capacity_bytes);

  // The datasets node `node` holds, sorted (NodeSnapshot::cached_datasets).
  const std::vector<DatasetKey>& Held(std::size_t node) const {
    return held_[node];
  }
  // Bumped whenever any node's holdings change.
  uint64_t version() const { return version_; }

  // A job starting on `node` at `now_ms` reads `need`: true when the node
  // holds it (a hit), else it is read from shared storage and kept if room
  // can be made by evicting datasets no running job there reads. Either
  // way the dataset is pinned until Release.
  bool Read(std::size_t node, const DatasetNeed& need, int64_t now_ms);
  // The job that Read it on `node` has ended.
  void Release(std::size_t node, const DatasetKey& key);

 private:
  struct Entry {
    DatasetKey key;
    uint64_t bytes = 0;
    int64_t last_use_ms = 0;
    uint32_t readers = 0;  // running jobs on the node reading it
    bool cached = true;    // false: read past a full cache, pinned only
  };
  Entry* Find(std::size_t node, const DatasetKey& key);
  bool MakeRoom(std::size_t node, uint64_t bytes);
  void Rebuild(std::size_t node);

  uint64_t capacity_;
  std::vector<std::vector<Entry>> entries_;
  std::vector<uint64_t> used_;
  std::vector<std::vector<DatasetKey>> held_;
  uint64_t version_ = 0;
};

}  // namespace gantry::sim
