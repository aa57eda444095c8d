#include "daemon/launch/node_restrictions.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

// More names than any cluster has nodes: a bound on hostile requests.
constexpr int kMaxListedNodes = 100'000;

absl::Status Invalid(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

}  // namespace

absl::Status CheckNodeRestrictions(
    const PartitionConfig& partition,
    const std::function<bool(const std::string&)>& known_node,
    v1::JobSpec& spec) {
  if (spec.required_nodes_size() > kMaxListedNodes ||
      spec.excluded_nodes_size() > kMaxListedNodes) {
    return Invalid(absl::StrCat("--nodelist and --exclude take at most ",
                                kMaxListedNodes, " nodes"));
  }
  for (const std::string& name : spec.required_nodes()) {
    if (std::find(spec.excluded_nodes().begin(), spec.excluded_nodes().end(),
                  name) != spec.excluded_nodes().end()) {
      return Invalid(
          absl::StrCat("node ", name, " is both in --nodelist and --exclude"));
    }
    if (!partition.all_nodes && !partition.Contains(name)) {
      return Invalid(absl::StrCat("--nodelist: node ", name,
                                  " is not in partition ", partition.name));
    }
    if (partition.all_nodes && !known_node(name)) {
      return Invalid(absl::StrCat("--nodelist: node ", name,
                                  " is unknown to this cluster (`gantry "
                                  "nodes` lists the nodes)"));
    }
  }
  if (!spec.gpu_type().empty() && spec.gpus_per_node() == 0 &&
      spec.gpus() == 0) {
    return Invalid(absl::StrCat("GPU type ", spec.gpu_type(),
                                " given without a GPU count"));
  }
  if (spec.gpu_type().size() > 64) return Invalid("the GPU type is too long");
  const auto listed = static_cast<uint32_t>(spec.required_nodes_size());
  if (spec.nodes() < listed) spec.set_nodes(listed);
  // Every listed node is in every allocation: a range cannot go below them.
  if (spec.min_nodes() > 0 && spec.min_nodes() < listed) {
    spec.set_min_nodes(listed);
  }
  if (spec.min_nodes() >= spec.nodes()) spec.set_min_nodes(0);
  if (!spec.constraint().empty()) {
    absl::StatusOr<NodeConstraint> constraint =
        NodeConstraint::Parse(spec.constraint());
    if (!constraint.ok()) return constraint.status();
    spec.set_constraint(constraint->text());
  }
  return absl::OkStatus();
}

void SetNodeRestrictions(const v1::JobSpec& spec,
                         std::shared_ptr<const NodeConstraint> constraint,
                         PendingJob& pending) {
  pending.required_nodes = {spec.required_nodes().begin(),
                            spec.required_nodes().end()};
  pending.excluded_nodes = {spec.excluded_nodes().begin(),
                            spec.excluded_nodes().end()};
  pending.constraint = std::move(constraint);
  pending.gpu_type = absl::AsciiStrToLower(spec.gpu_type());
}

}  // namespace gantry
