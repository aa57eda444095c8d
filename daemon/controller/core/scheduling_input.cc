#include "daemon/controller/core/scheduling_input.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "common/gpu_type.h"
#include "common/hostlist.h"
#include "daemon/launch/node_restrictions.h"
#include "daemon/launch/step_layout.h"
#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/gpu_choice.h"

namespace gantry {
namespace {

// Where the node's GPUs sit, for packing a one-node job's GPUs.
std::vector<uint32_t> GpuGroupsOf(const v1::NodeInventory& inventory) {
  std::vector<GpuPlace> places(static_cast<std::size_t>(inventory.gpus_size()));
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    if (gpu.index() >= places.size()) continue;
    GpuPlace& place = places[gpu.index()];
    if (!gpu.pcie_switches().empty()) {
      place.inner_switch = gpu.pcie_switches(0);
      place.outer_switch = gpu.pcie_switches(gpu.pcie_switches_size() - 1);
    }
    place.host_bridge = gpu.host_bridge();
    place.numa_node = gpu.numa_node();
    place.package = gpu.package();
  }
  return GpuGroups(places);
}

// What keys a cached copy: entries found on disk at the agent's start and
// not staged since have no source and key nothing.
std::optional<DatasetKey> KeyOf(const v1::CachedDatasetEntry& entry) {
  if (entry.source().empty()) return std::nullopt;
  return DatasetKey{entry.owner_uid(), entry.source()};
}

}  // namespace

PendingJob PendingJobOf(const v1::JobRecord& record,
                        std::shared_ptr<const NodeConstraint> constraint) {
  const v1::JobSpec& spec = record.spec();
  PendingJob pending;
  pending.id = JobId(record.id());
  pending.partition = spec.partition();
  pending.nodes = spec.nodes();
  pending.min_nodes = spec.min_nodes();
  pending.max_tasks_per_node = JobRanksOnNode(spec, 0);
  pending.cpus_per_task = spec.cpus_per_task();
  pending.gpus_per_node = spec.gpus_per_node();
  pending.mem_per_node_mb = spec.mem_per_node_mb();
  pending.is_restart = record.attempt() > 0;
  pending.user = record.user();
  pending.submit_time_ms = record.submit_time_ms();
  pending.time_limit_ms =
      static_cast<int64_t>(spec.time_limit_seconds()) * 1000;
  pending.exclusive = spec.exclusive();
  SetNodeRestrictions(spec, std::move(constraint), pending);
  pending.max_switches = spec.max_switches();
  if (spec.max_switches() > 0 && spec.switches_max_wait_seconds() > 0) {
    pending.switches_deadline_ms =
        record.submit_time_ms() +
        static_cast<int64_t>(spec.switches_max_wait_seconds()) * 1000;
  }
  pending.dataset_locality =
      spec.dataset_locality() == v1::DATASET_LOCALITY_CACHE
          ? DatasetLocality::kCache
          : DatasetLocality::kTopology;
  for (const v1::DatasetRef& dataset : spec.datasets()) {
    DatasetNeed need;
    need.key = DatasetKey{record.uid(), dataset.path()};
    if (std::none_of(pending.datasets.begin(), pending.datasets.end(),
                     [&](const DatasetNeed& n) { return n.key == need.key; })) {
      pending.datasets.push_back(std::move(need));
    }
  }
  return pending;
}

void AddDatasetSizes(const v1::DatasetCacheReport& cache, DatasetSizes& sizes) {
  for (const v1::CachedDatasetEntry& entry : cache.entries()) {
    if (std::optional<DatasetKey> key = KeyOf(entry)) {
      uint64_t& bytes = sizes[*key];
      bytes = std::max(bytes, entry.bytes());
    }
  }
}

void SetDatasetSizes(const DatasetSizes& sizes, PendingJob& job) {
  for (DatasetNeed& need : job.datasets) {
    auto it = sizes.find(need.key);
    need.bytes = it == sizes.end() ? 0 : it->second;
  }
}

void SetNodeCapacity(const v1::NodeRecord& record, NodeSnapshot& snapshot) {
  const v1::NodeInventory& inventory = record.inventory();
  snapshot.hot_spare = record.hot_spare();
  snapshot.partitions.assign(record.partitions().begin(),
                             record.partitions().end());
  snapshot.cpus_total = inventory.cpus();
  snapshot.gpus_total = static_cast<uint32_t>(inventory.gpus_size());
  snapshot.mem_total_mb = inventory.memory_mb();
}

void SetGpuTypes(const v1::NodeRecord& record, NodeSnapshot& snapshot) {
  snapshot.features.assign(record.features().begin(), record.features().end());
  snapshot.gpu_models.clear();
  snapshot.gpu_types.clear();
  for (const v1::GpuInfo& gpu : record.inventory().gpus()) {
    std::string model = absl::AsciiStrToLower(gpu.model());
    if (std::find(snapshot.gpu_models.begin(), snapshot.gpu_models.end(),
                  model) != snapshot.gpu_models.end()) {
      continue;
    }
    std::string type = GpuTypeOf(model);
    if (!type.empty() &&
        std::find(snapshot.gpu_types.begin(), snapshot.gpu_types.end(), type) ==
            snapshot.gpu_types.end()) {
      snapshot.gpu_types.push_back(std::move(type));
    }
    snapshot.gpu_models.push_back(std::move(model));
  }
}

NodeSnapshot NodeSnapshotOf(const v1::NodeRecord& record, bool reachable,
                            const NodeUsage& usage, const Topology* topology,
                            const v1::DatasetCacheReport& cache) {
  const v1::NodeInventory& inventory = record.inventory();
  NodeSnapshot s;
  s.name = record.name();
  SetNodeCapacity(record, s);
  s.schedulable = record.state() == v1::NODE_UP && reachable &&
                  !record.drained() && record.health_problems().empty();
  s.cpus_free =
      inventory.cpus() > usage.cpus ? inventory.cpus() - usage.cpus : 0;
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    if (!usage.gpus.count(gpu.index())) s.free_gpus.push_back(gpu.index());
  }
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    if (gpu.index() >= s.gpu_hca.size()) s.gpu_hca.resize(gpu.index() + 1);
    s.gpu_hca[gpu.index()] = gpu.nearest_hca();
  }
  s.gpu_groups = GpuGroupsOf(inventory);
  if (topology != nullptr) SetFabricPlace(*topology, s);
  SetGpuTypes(record, s);
  s.mem_free_mb = inventory.memory_mb() > usage.mem_mb
                      ? inventory.memory_mb() - usage.mem_mb
                      : 0;
  for (const v1::CachedDatasetEntry& entry : cache.entries()) {
    if (std::optional<DatasetKey> key = KeyOf(entry)) {
      s.cached_datasets.push_back(std::move(*key));
    }
  }
  std::sort(s.cached_datasets.begin(), s.cached_datasets.end());
  s.cached_datasets.erase(
      std::unique(s.cached_datasets.begin(), s.cached_datasets.end()),
      s.cached_datasets.end());
  return s;
}

std::shared_ptr<const NodeConstraint> ParsedConstraintOf(
    const std::string& text, std::shared_ptr<const NodeConstraint> cached) {
  if (text.empty()) return nullptr;
  if (cached && cached->text() == text) return cached;
  absl::StatusOr<NodeConstraint> parsed = NodeConstraint::Parse(text);
  return std::make_shared<const NodeConstraint>(parsed.ok() ? *std::move(parsed)
                                                            : NodeConstraint());
}

std::vector<size_t> InNodelistOrder(const std::vector<std::string>& nodes) {
  std::vector<size_t> order(nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  absl::StatusOr<std::vector<std::string>> listed =
      ExpandHostlist(CompressHostlist(nodes));
  if (!listed.ok()) return order;  // names that are not hostlist names
  std::map<std::string_view, size_t> position;
  for (size_t i = 0; i < listed->size(); ++i) {
    position.try_emplace((*listed)[i], i);
  }
  const auto place = [&](size_t i) {
    auto found = position.find(nodes[i]);
    return found == position.end() ? listed->size() : found->second;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return place(a) < place(b); });
  return order;
}

void SetAllocation(const JobStart& start,
                   const std::vector<const std::string*>& names,
                   v1::JobRecord& record) {
  // Slurm's contract, on every attempt (restarts onto spares, shrinks,
  // swaps): node i of the job, with its ranks, is the i-th host of
  // SLURM_JOB_NODELIST as scripts expand it, and the first is the batch
  // host (MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST |
  // head -n1)). Every share is sized for the most ranks a node gets, so
  // laying them out in that order changes no node's resources.
  std::vector<std::string> nodes;
  nodes.reserve(start.shares.size());
  for (const NodeShare& share : start.shares) {
    nodes.push_back(*names[share.node.index()]);
  }
  record.clear_allocation();
  uint32_t next_rank = 0;
  const std::vector<size_t> order = InNodelistOrder(nodes);
  for (size_t i = 0; i < order.size(); ++i) {
    const NodeShare& share = start.shares[order[i]];
    v1::NodeAllocation* allocation = record.add_allocation();
    allocation->set_node(*names[share.node.index()]);
    allocation->set_cpus(share.cpus);
    for (uint32_t gpu : share.gpus) allocation->add_gpu_indices(gpu);
    allocation->set_mem_mb(share.mem_mb);
    allocation->set_first_rank(next_rank);
    allocation->set_rank_count(
        JobRanksOnNode(record.spec(), static_cast<uint32_t>(i)));
    next_rank += allocation->rank_count();
  }
}

}  // namespace gantry
