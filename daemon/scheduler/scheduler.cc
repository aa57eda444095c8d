#include "daemon/scheduler/scheduler.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/scheduler/node_range.h"
#include "daemon/scheduler/scheduler_placement.h"

namespace gantry {
namespace {

using scheduler_internal::BuildFabricIndex;
using scheduler_internal::CpusNeeded;
using scheduler_internal::FabricIndex;
using scheduler_internal::FreeResources;
using scheduler_internal::kNever;
using scheduler_internal::NodeFilter;
using scheduler_internal::Placement;
using scheduler_internal::PlacementOutcome;
using scheduler_internal::PlacementRequest;
using scheduler_internal::Placer;

// Hashes a tuple of numbers (or a pair of such tuples), for the memos.
struct KeyHash {
  template <typename T>
  static std::size_t Mix(std::size_t seed, const T& value) {
    if constexpr (requires { std::tuple_size<T>::value; }) {
      std::apply(
          [&](const auto&... parts) { ((seed = Mix(seed, parts)), ...); },
          value);
      return seed;
    } else {
      return (seed ^ std::hash<T>{}(value)) * 0x9e3779b97f4a7c15ULL +
             (seed >> 29);
    }
  }
  template <typename T>
  std::size_t operator()(const T& key) const {
    return Mix(0x2545f4914f6cdd1dULL, key);
  }
};

template <typename Key, typename Value>
using Memo = std::unordered_map<Key, Value, KeyHash>;

std::string Describe(const PendingJob& job) {
  return absl::StrCat(
      job.nodes, " node(s) with ", CpusNeeded(job), " CPUs",
      job.gpus_per_node ? absl::StrCat(", ", job.gpus_per_node, " GPUs") : "",
      job.mem_per_node_mb ? absl::StrCat(", ", job.mem_per_node_mb, " MB") : "",
      job.exclusive ? " (exclusive)" : "", " each");
}

// Jobs that differ only in node count fail alike: if n nodes of a shape did
// not fit, n or more will not either while the pass only hands out
// resources. This keeps a pass over a long queue on a full cluster cheap.
// The partition is its number within the pass, so keys hold numbers only.
using Shape = std::tuple<uint32_t, uint32_t, uint64_t, bool, bool, uint32_t,
                         int64_t, uint32_t>;

Shape ShapeOf(const PendingJob& job, uint32_t partition,
              bool enforce_switch_limit, int64_t end_ms) {
  return {job.gpus_per_node,
          CpusNeeded(job),
          job.mem_per_node_mb,
          job.exclusive,
          job.is_restart,
          enforce_switch_limit ? job.max_switches : 0,
          end_ms,
          partition};
}

// What Describe depends on: nodes, CPUs, GPUs and memory per node, exclusive.
using DescribeKey = std::tuple<uint32_t, uint32_t, uint32_t, uint64_t, bool>;

DescribeKey DescribeKeyOf(const PendingJob& job) {
  return {job.nodes, CpusNeeded(job), job.gpus_per_node, job.mem_per_node_mb,
          job.exclusive};
}

struct KnownFailure {
  uint32_t nodes = 0;
  PlacementOutcome outcome = PlacementOutcome::kNoRoom;
};

// What decides whether a job has enough fitting nodes, leaving out the node
// count, the end time and the --switches limit: partition, GPUs, CPUs and
// memory per node, exclusive, restart (the partition's number last).
using FitKey = std::tuple<uint32_t, uint32_t, uint64_t, bool, bool, uint32_t>;

// A placement fails for lack of room (kNoRoom) exactly when fewer nodes fit
// than the job needs; the --switches limit plays no part. Within a pass the
// free resources only shrink and reservations only grow, so a job that
// failed so with n nodes and an (effective) end e shows that every job of
// the same FitKey with at least n nodes and an end of at least e fails too.
// The points kept are the minimal ones.
class NoRoomMemo {
 public:
  bool Covers(const FitKey& key, uint32_t nodes, int64_t end) const {
    auto it = points_.find(key);
    if (it == points_.end()) return false;
    for (const auto& [n, e] : it->second) {
      if (nodes >= n && end >= e) return true;
    }
    return false;
  }
  void Add(const FitKey& key, uint32_t nodes, int64_t end) {
    std::vector<std::pair<uint32_t, int64_t>>& points = points_[key];
    std::erase_if(points, [&](const std::pair<uint32_t, int64_t>& p) {
      return p.first >= nodes && p.second >= end;
    });
    points.emplace_back(nodes, end);
  }

 private:
  Memo<FitKey, std::vector<std::pair<uint32_t, int64_t>>> points_;
};

// A resource-holding job ending at some time, for reservations.
struct Release {
  int64_t end_ms = 0;
  const std::vector<NodeShare>* shares = nullptr;
};

class Pass {
 public:
  Pass(const std::vector<NodeSnapshot>& nodes,
       const std::vector<RunningJob>& running, const SchedulerOptions& options)
      : nodes_(nodes),
        options_(options),
        fabric_(BuildFabricIndex(nodes, options.unlisted_nodes)),
        placer_(nodes, fabric_),
        free_(FreeResources::Of(nodes, fabric_)),
        reserved_from_(nodes.size(), kNever) {
    for (const RunningJob& job : running) {
      releases_.push_back({job.expected_end_ms, &job.shares});
    }
  }

  ScheduleResult Run(const std::vector<PendingJob>& queue) {
    result_.waits.reserve(queue.size());
    for (const PendingJob& job : queue) Consider(job);
    return std::move(result_);
  }

 private:
  // The partition's number within the pass, given on first sight.
  uint32_t PartitionId(const std::string& name) {
    auto [it, inserted] = partition_ids_.try_emplace(
        std::string_view(name), static_cast<uint32_t>(partition_ids_.size()));
    if (inserted) {
      blocked_.push_back(false);
      reserved_partitions_.push_back(false);
    }
    return it->second;
  }

  void Consider(const PendingJob& requested) {
    const uint32_t partition = PartitionId(requested.partition);
    const NodeRange range = NodeRangeOf(requested.nodes, requested.min_nodes);
    // A job with a node range waits, reserves and never fits as its
    // minimum would; it starts on as many nodes as fit now (node_range.h).
    PendingJob at_min;
    if (range.IsRange()) {
      at_min = requested;
      at_min.nodes = range.min;
      at_min.min_nodes = 0;
    }
    const PendingJob& job = range.IsRange() ? at_min : requested;
    if (NeverFits(job, partition) || WaitsForDownNodes(job, partition)) {
      return;
    }
    if (blocked_[partition]) {
      Wait(job, "Priority", "waiting behind a higher-priority job");
      return;
    }
    const int64_t end_ms =
        job.time_limit_ms > 0 ? options_.now_ms + job.time_limit_ms : kNever;
    const bool enforce_switch_limit =
        job.max_switches > 0 && (job.switches_deadline_ms == 0 ||
                                 options_.now_ms < job.switches_deadline_ms);
    PlacementRequest request;
    request.job = &job;
    request.topology_aware = options_.topology_aware;
    request.enforce_switch_limit = enforce_switch_limit;
    request.filter = NodeFilter{&reserved_from_, end_ms};
    request.partition = partition;

    // A job with node restrictions is placed on its own: no other job's
    // outcome says anything about it.
    auto place = [&](const PendingJob& sized) {
      PlacementRequest sized_request = request;
      sized_request.job = &sized;
      return sized.HasNodeRestrictions()
                 ? placer_.Place(sized_request, free_)
                 : PlaceByShape(
                       sized_request,
                       ShapeOf(sized, partition, enforce_switch_limit, end_ms));
    };
    std::optional<Placement> min_placement;  // a range's failure at MIN
    if (range.IsRange()) {
      PendingJob sized = at_min;
      Placement largest;
      uint32_t largest_nodes = 0;
      const std::optional<uint32_t> size = LargestFittingSize(
          range, static_cast<uint32_t>(CapableCount(job, partition)),
          [&](uint32_t nodes) {
            sized.nodes = nodes;
            Placement placement = place(sized);
            if (placement.outcome != PlacementOutcome::kPlaced) {
              if (nodes == range.min) min_placement = std::move(placement);
              return false;
            }
            if (nodes > largest_nodes) {
              largest = std::move(placement);
              largest_nodes = nodes;
            }
            return true;
          });
      if (size.has_value()) {
        sized.nodes = *size;
        Start(sized, largest, end_ms);
        return;
      }
    }
    const Placement placement =
        min_placement.has_value() ? *std::move(min_placement) : place(job);
    if (placement.outcome == PlacementOutcome::kPlaced) {
      Start(job, placement, end_ms);
      return;
    }
    const bool has_reservation = reserved_partitions_[partition];
    if (!options_.backfill) {
      blocked_[partition] = true;
    } else if (!has_reservation) {
      reserved_partitions_[partition] = true;
      if (Reserve(job, request, placement.outcome)) return;
    }
    if (placement.outcome == PlacementOutcome::kSwitchLimit) {
      Wait(job, "Topology",
           absl::StrCat("needs ", job.nodes, " node(s) within ",
                        job.max_switches, " leaf switch(es)"));
    } else if (has_reservation && FitsIgnoringReservations(request)) {
      Wait(job, "Priority",
           "would delay the reservation of a higher-priority job");
    } else {
      Wait(job, "Resources", NeedsDetail(job));
    }
  }

  // PlaceNow, answering from (and adding to) the failures of earlier jobs of
  // the same shape: one that failed with no more nodes proves this fails.
  Placement PlaceByShape(const PlacementRequest& request, const Shape& shape) {
    const PendingJob& job = *request.job;
    auto known = failures_.find(shape);
    if (known != failures_.end() && job.nodes >= known->second.nodes) {
      Placement placement;
      placement.outcome = known->second.outcome;
      return placement;
    }
    Placement placement = PlaceNow(request);
    if (placement.outcome != PlacementOutcome::kPlaced) {
      KnownFailure& failure = failures_[shape];
      if (failure.nodes == 0 || job.nodes < failure.nodes) {
        failure = {job.nodes, placement.outcome};
      }
    }
    return placement;
  }

  // "needs " and the job's description, formatted once per description.
  const std::string& NeedsDetail(const PendingJob& job) {
    auto [it, inserted] = needs_details_.try_emplace(DescribeKeyOf(job));
    if (inserted) it->second = absl::StrCat("needs ", Describe(job));
    return it->second;
  }

  // How many nodes could ever hold one node's share of the job.
  std::size_t CapableCount(const PendingJob& job, uint32_t partition) {
    if (job.HasNodeRestrictions()) return placer_.CapableNodes(job, partition);
    const auto key =
        std::make_tuple(job.gpus_per_node, CpusNeeded(job), job.mem_per_node_mb,
                        job.is_restart, partition);
    auto it = capable_.find(key);
    if (it == capable_.end()) {
      it = capable_.emplace(key, placer_.CapableNodes(job, partition)).first;
    }
    return it->second;
  }

  bool NeverFits(const PendingJob& job, uint32_t partition) {
    if (job.HasNodeRestrictions()) return RestrictedNeverFits(job, partition);
    const auto key =
        std::make_tuple(job.gpus_per_node, CpusNeeded(job), job.mem_per_node_mb,
                        job.is_restart, partition);
    const std::size_t capable = CapableCount(job, partition);
    if (capable >= job.nodes) return false;
    // The count follows from the key, so the text from the key and the
    // description.
    auto [detail, inserted] = never_fits_details_.try_emplace(
        std::make_pair(DescribeKeyOf(job), key));
    if (inserted) {
      detail->second =
          absl::StrCat("needs ", Describe(job), "; ",
                       placer_.CapableText(job, partition, capable));
    }
    Wait(job, "PartitionNodeLimit", detail->second);
    return true;
  }

  // Enough nodes could hold the job, but too few of them are up: it waits
  // for nodes to come back or be resumed, which no job ending gives it (not
  // Resources), and it reserves nothing, so other jobs go ahead meanwhile.
  bool WaitsForDownNodes(const PendingJob& job, uint32_t partition) {
    std::size_t up;
    if (job.HasNodeRestrictions()) {
      up = placer_.CapableNodes(job, partition, /*up_only=*/true);
    } else {
      const auto key =
          std::make_tuple(job.gpus_per_node, CpusNeeded(job),
                          job.mem_per_node_mb, job.is_restart, partition);
      auto it = capable_up_.find(key);
      if (it == capable_up_.end()) {
        it = capable_up_
                 .emplace(key, placer_.CapableNodes(job, partition,
                                                    /*up_only=*/true))
                 .first;
      }
      up = it->second;
    }
    if (up >= job.nodes) return false;
    Wait(job, "NodeDown",
         absl::StrCat(NeedsDetail(job), "; up: ", up, " of the ",
                      CapableCount(job, partition),
                      " nodes that could hold it, the others down or drained "
                      "(gantry nodes -R says why; gantry resume NODE returns "
                      "a repaired one)"));
    return true;
  }

  // NeverFits for a job with --nodelist/--exclude/--constraint: its own
  // count of nodes, no memo.
  bool RestrictedNeverFits(const PendingJob& job, uint32_t partition) {
    const std::size_t capable = placer_.CapableNodes(job, partition);
    if (capable >= job.nodes) return false;
    Wait(job, "PartitionNodeLimit",
         absl::StrCat("needs ", Describe(job),
                      job.gpu_type.empty()
                          ? ""
                          : absl::StrCat(" of GPU type ", job.gpu_type),
                      " on nodes that match its --nodelist, --exclude, "
                      "--constraint and GPU type; ",
                      placer_.CapableText(job, partition, capable)));
    return true;
  }

  // Only labels a wait (Priority or Resources), so one answer per shape
  // and node count serves the whole pass; a failure covers bigger counts.
  bool FitsIgnoringReservations(PlacementRequest request) {
    if (request.job->HasNodeRestrictions()) {
      request.filter = NodeFilter{};
      return placer_.Place(request, free_).outcome == PlacementOutcome::kPlaced;
    }
    Shape shape = ShapeOf(*request.job, request.partition,
                          request.enforce_switch_limit, 0);
    auto failed = ignoring_reservations_failed_.find(shape);
    if (failed != ignoring_reservations_failed_.end() &&
        request.job->nodes >= failed->second) {
      return false;
    }
    auto [it, inserted] = ignoring_reservations_fit_.emplace(
        std::make_pair(shape, request.job->nodes), false);
    if (!inserted) return it->second;
    request.filter = NodeFilter{};
    it->second = PlaceNow(request).outcome == PlacementOutcome::kPlaced;
    if (!it->second) {
      uint32_t& nodes = ignoring_reservations_failed_[shape];
      if (nodes == 0 || request.job->nodes < nodes) nodes = request.job->nodes;
    }
    return it->second;
  }

  // Placer::Place on the free resources of the pass, answering a failure
  // for lack of room from the memo when an earlier job proves it.
  Placement PlaceNow(const PlacementRequest& request) {
    const PendingJob& job = *request.job;
    const FitKey key{job.gpus_per_node, CpusNeeded(job), job.mem_per_node_mb,
                     job.exclusive,     job.is_restart,  request.partition};
    const int64_t end = EffectiveEnd(request.filter);
    if (no_room_.Covers(key, job.nodes, end)) return {};
    // The effective end admits the same nodes, and lets jobs with different
    // ends share the placer's fitting sets.
    PlacementRequest live = request;
    live.live = true;
    if (live.filter.reserved_from != nullptr) live.filter.job_end_ms = end;
    Placement placement = placer_.Place(live, free_);
    if (placement.outcome == PlacementOutcome::kNoRoom) {
      no_room_.Add(key, job.nodes, end);
    }
    return placement;
  }

  // The end time that admits the same nodes as the filter's: nodes are
  // reserved only from reservation start times, so an end maps to the
  // first such time at or after it. No filter admits every node.
  int64_t EffectiveEnd(const NodeFilter& filter) const {
    if (filter.reserved_from == nullptr) {
      return std::numeric_limits<int64_t>::min();
    }
    auto it = reservation_starts_.lower_bound(filter.job_end_ms);
    return it == reservation_starts_.end() ? kNever : *it;
  }

  void Start(const PendingJob& job, const Placement& placement,
             int64_t end_ms) {
    JobStart start;
    start.job_id = job.id;
    start.leaf_switches = placement.leaf_switches;
    start.backfilled = reserved_partitions_[PartitionId(job.partition)];
    for (std::size_t node : placement.nodes) {
      NodeShare share =
          scheduler_internal::ShareOn(node, nodes_[node], job, free_);
      free_.Take(share);
      start.shares.push_back(std::move(share));
    }
    result_.starts.push_back(std::move(start));
    started_ends_.push_back(end_ms);
  }

  // The earliest time the job fits as the running jobs end; its nodes are
  // then held for it: only jobs that end by then may use them.
  bool Reserve(const PendingJob& job, PlacementRequest request,
               PlacementOutcome why_now) {
    std::vector<Release> releases = releases_;
    for (std::size_t i = 0; i < started_ends_.size(); ++i) {
      releases.push_back({started_ends_[i], &result_.starts[i].shares});
    }
    std::sort(
        releases.begin(), releases.end(),
        [](const Release& a, const Release& b) { return a.end_ms < b.end_ms; });
    // Fitting after the first k releases is monotonic in k: search it.
    request.filter = NodeFilter{};
    // The free resources after the first base_k releases (every probe
    // looks at no fewer), so a probe returns only the releases past them.
    // Assigning into the same buffers reuses their per-node GPU lists.
    FreeResources& base = reserve_base_;
    base = free_;
    std::size_t base_k = 0;
    auto place_after = [&](std::size_t k) {
      FreeResources& later = later_;
      later = base;
      for (std::size_t i = base_k; i < k; ++i) {
        for (const NodeShare& share : *releases[i].shares) later.Return(share);
      }
      return placer_.Place(request, later);
    };
    std::size_t low = 1, high = releases.size();
    while (high > 0 && releases[high - 1].end_ms == kNever) --high;
    if (high == 0 || place_after(high).outcome != PlacementOutcome::kPlaced) {
      return false;
    }
    while (low < high) {
      const std::size_t mid = low + (high - low) / 2;
      if (place_after(mid).outcome == PlacementOutcome::kPlaced) {
        high = mid;
      } else {
        low = mid + 1;
        // Later probes look at least at low releases: later_ holds the
        // first mid, so it and release mid become the base.
        std::swap(base, later_);
        for (const NodeShare& share : *releases[mid].shares) {
          base.Return(share);
        }
        base_k = low;
      }
    }
    // Everything ending at the same moment frees together.
    while (high < releases.size() &&
           releases[high].end_ms == releases[high - 1].end_ms) {
      ++high;
    }
    const Placement placement = place_after(high);
    Reservation reservation;
    reservation.job_id = job.id;
    reservation.start_ms = std::max(options_.now_ms, releases[high - 1].end_ms);
    for (std::size_t i : placement.nodes)
      reservation.nodes.push_back(NodeId(i));
    for (std::size_t node : placement.nodes) {
      reserved_from_[node] =
          std::min(reserved_from_[node], reservation.start_ms);
    }
    if (!placement.nodes.empty()) {
      reservation_starts_.insert(reservation.start_ms);
      placer_.ForgetFittingSets();
    }
    JobWait wait{
        job.id,
        why_now == PlacementOutcome::kSwitchLimit ? "Topology" : "Resources",
        absl::StrCat("needs ", Describe(job), "; reserved ",
                     placement.nodes.size(), " node(s) from ",
                     reservation.start_ms - options_.now_ms, " ms from now"),
        reservation.start_ms};
    result_.waits.push_back(std::move(wait));
    result_.reservations.push_back(std::move(reservation));
    return true;
  }

  void Wait(const PendingJob& job, std::string reason, std::string detail) {
    result_.waits.push_back({job.id, std::move(reason), std::move(detail), 0});
  }

  const std::vector<NodeSnapshot>& nodes_;
  const SchedulerOptions& options_;
  FabricIndex fabric_;
  Placer placer_;
  FreeResources free_;
  FreeResources later_;         // scratch for Reserve
  FreeResources reserve_base_;  // scratch for Reserve
  std::vector<int64_t> reserved_from_;
  std::vector<Release> releases_;
  std::vector<int64_t> started_ends_;
  // By partition number; the names are views of the queue's strings.
  std::unordered_map<std::string_view, uint32_t> partition_ids_;
  std::vector<bool> blocked_;
  std::vector<bool> reserved_partitions_;
  Memo<Shape, KnownFailure> failures_;
  NoRoomMemo no_room_;
  std::set<int64_t> reservation_starts_;  // the values in reserved_from_
  Memo<Shape, uint32_t> ignoring_reservations_failed_;
  Memo<std::pair<Shape, uint32_t>, bool> ignoring_reservations_fit_;
  using CapableKey = std::tuple<uint32_t, uint32_t, uint64_t, bool, uint32_t>;
  Memo<CapableKey, std::size_t> capable_;
  Memo<CapableKey, std::size_t> capable_up_;  // the same, up nodes only
  Memo<DescribeKey, std::string> needs_details_;
  Memo<std::pair<DescribeKey, CapableKey>, std::string> never_fits_details_;
  ScheduleResult result_;
};

}  // namespace

ScheduleResult Schedule(const std::vector<NodeSnapshot>& nodes,
                        const std::vector<PendingJob>& queue,
                        const std::vector<RunningJob>& running,
                        const SchedulerOptions& options) {
  return Pass(nodes, running, options).Run(queue);
}

bool NodeServesJob(const NodeSnapshot& node, const PendingJob& job) {
  return scheduler_internal::UsableBy(node, job);
}

bool NodeCouldEverHold(const NodeSnapshot& node, const PendingJob& job) {
  return scheduler_internal::CapableOf(node, job);
}

bool NodeHasGpuType(const NodeSnapshot& node, const std::string& type) {
  return scheduler_internal::HasGpuType(node, type);
}

uint32_t CpusPerNode(const PendingJob& job) {
  return scheduler_internal::CpusNeeded(job);
}

}  // namespace gantry
