// sbatch --constraint: which node features a job needs.
//
//   gpu80g               nodes with the feature gpu80g
//   a100&ib              nodes with both
//   a100|h100            nodes with either (each node may differ)
//   (a100|h100)&ib       parentheses group
//   [rack1|rack2]        matching OR: every node of the job has the same one
//                        of these (at most one bracket group per expression)
//
// Features are what the admin gives each agent (`gantry-agent --features`),
// as Slurm's NodeName Features=. A feature name is letters, digits and
// `_ . - :`. Slurm's feature counts (`a100*4`) are refused with a clear
// error. `&` binds tighter than `|`, as in Slurm.
//
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

class NodeConstraint {
 public:
  struct Term;  // the parsed expression (node_constraint.cc)

  // A default-constructed constraint matches no node.
  // INVALID_ARGUMENT names the bad part of the expression.
  static absl::StatusOr<NodeConstraint> Parse(std::string_view text);

  // The choices of the matching-OR group: placing the job tries each in
  // turn, all nodes on the same one. 1 when there is no such group.
  std::size_t ChoiceCount() const { return choices_; }

  // Whether a node with these features (any order) satisfies the expression
  // when the matching-OR group takes choice `choice` (< ChoiceCount()).
  bool Matches(const std::vector<std::string>& features,
               std::size_t choice) const;

  // The expression as parsed, without spaces: what squeue and `gantry job`
  // show.
  const std::string& text() const { return text_; }

 private:
  std::shared_ptr<const Term> root_;
  std::size_t choices_ = 1;
  std::string text_;
};

// Checks a feature list as an agent declares it (comma separated names).
absl::StatusOr<std::vector<std::string>> ParseFeatureList(
    std::string_view text);

}  // namespace gantry
