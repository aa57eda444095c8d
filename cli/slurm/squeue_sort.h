// squeue's -S/--sort: "P,t,-p" and the like, each key a -o letter (or a -O
// name) preceded by "+" (ascending, the default) or "-" (descending). Keys
// compare as Slurm does: numbers as numbers (ids, counts, priority), times
// by time, states by their order (pending before running), the rest as
// text.
//
// Pure; a parsed SqueueSort is immutable and safe to share.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// squeue's default order for jobs: partition, state, then priority
// (highest first).
inline constexpr char kSqueueDefaultSort[] = "P,t,-p";

class SqueueSort {
 public:
  // INVALID_ARGUMENT names an empty key or an unknown letter or name.
  static absl::StatusOr<SqueueSort> Parse(std::string_view keys);

  // Sorts stably: jobs equal on every key keep their order.
  void Apply(std::vector<const v1::JobRecord*>& jobs, int64_t now_ms) const;

  // Negative, 0 or positive as `a` comes before, with or after `b`.
  int Compare(const v1::JobRecord& a, const v1::JobRecord& b,
              int64_t now_ms) const;

 private:
  struct Key {
    char letter = 0;
    bool descending = false;
  };
  std::vector<Key> keys_;
};

}  // namespace gantry::cli
