// Strong id types for values that cross module boundaries, so a job id
// cannot be passed where a count, an index or another id is expected, and
// a reader sees what a number is. Plain values; thread-safe.
//
// The wire format (protobuf) keeps bare integers; code converts at the
// edges with JobId(value) and .value().
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>

namespace gantry {

// A job's id (an array task has its own). 0: none.
class JobId {
 public:
  constexpr JobId() = default;
  constexpr explicit JobId(uint64_t value) : value_(value) {}
  constexpr uint64_t value() const { return value_; }
  friend constexpr auto operator<=>(JobId, JobId) = default;
  friend std::ostream& operator<<(std::ostream& out, JobId id) {
    return out << id.value_;
  }
  template <typename H>
  friend H AbslHashValue(H hash, JobId id) {
    return H::combine(std::move(hash), id.value_);
  }

 private:
  uint64_t value_ = 0;
};

// A node of the snapshot a scheduling call was given
// (daemon/scheduler/scheduler.h): its position in that vector, meaningful
// only with that snapshot. Outside the scheduler a node is its name.
class NodeId {
 public:
  constexpr NodeId() = default;
  constexpr explicit NodeId(std::size_t index) : index_(index) {}
  constexpr std::size_t index() const { return index_; }
  friend constexpr auto operator<=>(NodeId, NodeId) = default;
  friend std::ostream& operator<<(std::ostream& out, NodeId id) {
    return out << "node#" << id.index_;
  }

 private:
  std::size_t index_ = 0;
};

// A job's steps are numbered from 1 in records and on the wire, where 0
// names the job's own ranks (the batch script). Slurm numbers steps from
// 0, and that is the number users and their tools see: SLURM_STEP_ID,
// sacct's N.0, squeue -s, sattach N.0, srun's messages, -o %s.
constexpr uint32_t SlurmStepNumber(uint32_t step_id) { return step_id - 1; }
constexpr uint32_t StepIdOfSlurmNumber(uint32_t number) { return number + 1; }

}  // namespace gantry

template <>
struct std::hash<gantry::JobId> {
  size_t operator()(gantry::JobId id) const noexcept {
    return std::hash<uint64_t>()(id.value());
  }
};
