#include "daemon/controller/core/gpu_type_census.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/gpu_type.h"
#include "daemon/scheduler/scheduler.h"

namespace gantry {

bool GpuTypesMayChange(const v1::NodeRecord& record, int64_t started_ms,
                       int64_t now_ms, int64_t grace_ms) {
  if (now_ms >= started_ms + grace_ms ||
      record.registered_time_ms() >= started_ms) {
    return false;
  }
  for (const v1::GpuInfo& gpu : record.inventory().gpus()) {
    if (IsUnnamedGpuModel(gpu.model())) return true;
  }
  return false;
}

bool GpuTypeCensus::Add(const NodeSnapshot& node, bool may_change) {
  if (job_.gpu_type.empty()) return true;
  const bool has_type = NodeHasGpuType(node, job_.gpu_type);
  if (!NodeServesJob(node, job_)) {
    if (!has_type) return false;
    bool in_partition = false;
    for (const std::string& partition : node.partitions) {
      if (partition == job_.partition) {
        in_partition = true;  // a hot spare: kept for restarts
      } else {
        partitions_with_type_.insert(partition);
      }
    }
    spares_with_type_ += in_partition;
    return false;
  }
  ++serving_;
  for (const std::string& type : node.gpu_types) types_here_.insert(type);
  for (const std::string& model : node.gpu_models) {
    if (IsUnnamedGpuModel(model)) {
      unnamed_here_.insert(absl::StrCat("PCI ", model.substr(4)));
    }
  }
  const bool could = has_type || may_change;
  matching_ += could;
  return could;
}

absl::Status GpuTypeCensus::Verdict() const {
  if (job_.gpu_type.empty() || serving_ == 0 || matching_ > 0) {
    return absl::OkStatus();
  }
  std::vector<std::string> here(types_here_.begin(), types_here_.end());
  for (const std::string& model : unnamed_here_) {
    here.push_back(absl::StrCat(model,
                                " (unnamed: no pci.ids entry on its "
                                "agent)"));
  }
  std::string message = absl::StrCat(
      "no node in partition ", job_.partition, " has GPU type ", job_.gpu_type,
      " (",
      here.empty()
          ? "its nodes have no GPUs"
          : absl::StrCat("GPU types there: ", absl::StrJoin(here, ", ")));
  if (spares_with_type_ > 0) {
    absl::StrAppend(&message, "; its ", spares_with_type_, " node(s) with ",
                    job_.gpu_type, " are hot spares, kept for restarts");
  }
  if (!partitions_with_type_.empty()) {
    absl::StrAppend(
        &message, "; ",
        partitions_with_type_.size() == 1 ? "partition " : "partitions ",
        absl::StrJoin(partitions_with_type_, ", "),
        partitions_with_type_.size() == 1 ? " has " : " have ", job_.gpu_type);
  }
  absl::StrAppend(&message, ")");
  return absl::InvalidArgumentError(message);
}

}  // namespace gantry
