// A status's message as a string, for the unit tests' expectations
// (CHECK(Message(result.status()) == "...")).
#pragma once

#include <string>

#include "absl/status/status.h"

namespace gantry::testing {

inline std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

}  // namespace gantry::testing
