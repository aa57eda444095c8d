// libFuzzer target for the --constraint parser and the agent's --features
// list, which read user input on the client and again in the controller.
//
// Beyond "no crash": an accepted constraint has at least one choice, its
// canonical text parses again to a constraint that agrees with it on a few
// feature sets, and errors carry a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/node_constraint.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<std::vector<std::string>> features =
      gantry::ParseFeatureList(input);
  Check(features.ok() || !features.status().message().empty());
  const absl::StatusOr<gantry::NodeConstraint> constraint =
      gantry::NodeConstraint::Parse(input);
  if (!constraint.ok()) {
    Check(constraint.status().code() == absl::StatusCode::kInvalidArgument);
    Check(!constraint.status().message().empty());
    return 0;
  }
  Check(constraint->ChoiceCount() >= 1);
  const absl::StatusOr<gantry::NodeConstraint> again =
      gantry::NodeConstraint::Parse(constraint->text());
  Check(again.ok() && again->text() == constraint->text() &&
        again->ChoiceCount() == constraint->ChoiceCount());
  const std::vector<std::vector<std::string>> samples = {
      {},
      {"a"},
      {"a", "b"},
      features.ok() ? *features : std::vector<std::string>{}};
  for (const std::vector<std::string>& sample : samples) {
    for (std::size_t choice = 0; choice < constraint->ChoiceCount(); ++choice) {
      Check(constraint->Matches(sample, choice) ==
            again->Matches(sample, choice));
    }
  }
  return 0;
}
