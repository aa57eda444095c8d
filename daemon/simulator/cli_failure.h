// How gantry-sim's subcommands end on an error: the message on stderr,
// prefixed with the program's name, and the exit code to return. Shared so
// that every subcommand reports failures the same way.
#pragma once

#include <cstdio>
#include <string>

#include "absl/status/status.h"

namespace gantry::sim {

inline int PrintFailure(const absl::Status& status, int exit_code) {
  std::fprintf(stderr, "gantry-sim: %s\n",
               std::string(status.message()).c_str());
  return exit_code;
}

}  // namespace gantry::sim
