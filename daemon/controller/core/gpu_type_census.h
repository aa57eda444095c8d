// Submission and job updates: refusing a --gres=gpu:TYPE:N that no node of
// the job's partition could ever match, naming the GPU types the partition
// has (and where the type is, if elsewhere), instead of letting the job
// wait forever with PartitionNodeLimit. Slurm refuses such a request at
// submission too ("Requested node configuration is not available").
//
// Every node record counts, down and drained ones included: they are the
// cluster's configuration, as Slurm's slurm.conf is. A node whose GPU
// types may still change counts as having any type (GpuTypesMayChange).
//
// Pure; a census is used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "daemon/scheduler/scheduler_types.h"
#include "gantry/v1/types.pb.h"

namespace gantry {

// Whether a node's GPU types may still change: right after a controller
// start (within `grace_ms` of `started_ms`) a record stored before it, with
// GPUs nothing had named ("PCI 10de:20b0"), until its agent registers again
// (it may name them now, e.g. with pci.ids installed since).
bool GpuTypesMayChange(const v1::NodeRecord& record, int64_t started_ms,
                       int64_t now_ms, int64_t grace_ms);

class GpuTypeCensus {
 public:
  // `job` as the scheduler sees it (partition, gpu_type in lower case).
  explicit GpuTypeCensus(PendingJob job) : job_(std::move(job)) {}

  // Counts one node, its snapshot carrying partitions, spare mark, GPU
  // models, types and features (SetNodeCapacity, SetGpuTypes). Returns
  // whether it could hold the job's GPU type: it has it, or its types may
  // still change (`may_change`); true when the job names no type.
  bool Add(const NodeSnapshot& node, bool may_change);

  // OK when the job names no type, no node serves its partition yet (a
  // cluster starting: nothing to judge), or one that does could have it.
  // Otherwise INVALID_ARGUMENT, e.g. "no node in partition gpu has GPU type
  // a100 (GPU types there: h100, v100; partition old has a100)".
  absl::Status Verdict() const;

 private:
  const PendingJob job_;
  uint32_t serving_ = 0;   // nodes that serve the job's partition
  uint32_t matching_ = 0;  // of those, ones that could have the type
  uint32_t spares_with_type_ = 0;
  std::set<std::string> types_here_;  // of the serving nodes' GPUs
  std::set<std::string> unnamed_here_;
  std::set<std::string> partitions_with_type_;  // others that have it
};

}  // namespace gantry
