// Slurm topology.conf files of ../shared/data/fabric/slurm for unit tests:
// LOAD_SLURM_TREE_OR_SKIP declares the parsed tree, or skips the test case
// (naming the path) when the data is absent. Catch2 only; thread-safe as
// the parser is.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "common/slurm_topology_parser.h"
#include "common/topology.h"
#include "tests/unit/support/shared_data.h"

namespace gantry::testing {

inline Topology LoadSlurmTree(const std::string& path) {
  absl::StatusOr<Topology> tree = LoadSlurmTopologyFile(path);
  REQUIRE(tree.ok());
  return *std::move(tree);
}

}  // namespace gantry::testing

// Declares `const Topology tree` from the named file of fabric/slurm.
#define LOAD_SLURM_TREE_OR_SKIP(tree, file)                          \
  const std::string tree##_path = ::gantry::testing::SharedDataPath( \
      std::string("fabric/slurm/") + (file));                        \
  GANTRY_REQUIRE_SHARED_DATA(tree##_path);                           \
  const ::gantry::Topology tree = ::gantry::testing::LoadSlurmTree(tree##_path)
