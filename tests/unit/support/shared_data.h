// Where tests find the real-server data of ../shared/data (hwloc XML,
// fabric dumps, job traces), which a clone may not have: tests that need a
// file skip with its path when it is absent (GANTRY_REQUIRE_SHARED_DATA).
//
// The directory is GANTRY_SHARED_DATA from the environment, else the
// compile-time GANTRY_SHARED_DATA (tests/unit/CMakeLists.txt). Setting the
// variable to a missing directory shows what a clone without the data runs.
//
// Thread-safe (reads the environment only).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/unit/support/skip.h"

#ifndef GANTRY_SHARED_DATA
#define GANTRY_SHARED_DATA ""
#endif

namespace gantry::testing {

// The shared data directory joined with `relative` ("hwloc", "fabric/slurm").
inline std::string SharedDataPath(const std::string& relative) {
  const char* from_environment = std::getenv("GANTRY_SHARED_DATA");
  const std::string root =
      from_environment != nullptr ? from_environment : GANTRY_SHARED_DATA;
  return root + "/" + relative;
}

}  // namespace gantry::testing

// Skips the running test case, naming `path`, when `path` does not exist.
#define GANTRY_REQUIRE_SHARED_DATA(path)                                   \
  do {                                                                     \
    const std::string gantry_required_path = (path);                       \
    if (!std::filesystem::exists(gantry_required_path)) {                  \
      GANTRY_SKIP(gantry_required_path                                     \
                  << " is absent (../shared/data, or $GANTRY_SHARED_DATA " \
                     "if set); nothing was checked");                      \
    }                                                                      \
  } while (0)
