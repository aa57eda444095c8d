// Datasets a job declares (--dataset=NAME:PATH): the syntax of the option,
// the rules a name and a path must follow, and the variable that tells the
// job's ranks where the node-local copy is.
//
// A NAME becomes part of an environment variable name
// (GANTRY_DATASET_<NAME>), so it is an identifier: letters, digits and
// underscores, not starting with a digit. A PATH is the directory on shared
// storage as every node sees it: absolute and in normal form (no "." or
// ".." components, no repeated or trailing slashes), so two jobs naming the
// same tree spell it the same way and a cache keyed by it cannot be fooled
// by "/data/../etc".
//
// The CLI checks the syntax as the user writes it (and makes a relative
// path absolute); gantryd checks the stored form again, since any client
// may send a JobSpec. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry {

// Bounds: a job reading more than this many separate trees is a typo or a
// misuse of the cache; a name longer than this is not a name.
inline constexpr size_t kMaxDatasetsPerJob = 16;
inline constexpr size_t kMaxDatasetNameBytes = 64;

// The prefix of the variable each rank gets: GANTRY_DATASET_<NAME>.
inline constexpr std::string_view kDatasetVariablePrefix = "GANTRY_DATASET_";

struct DatasetDeclaration {
  std::string name;
  std::string path;  // as written (the CLI makes it absolute)
  // ",version=content" after the name: versions by a digest of the files'
  // content rather than their sizes and modification times.
  bool version_by_content = false;
};

// Splits "NAME[,version=metadata|content]:PATH" at the first colon (a name
// holds no colon; a path may) and checks the name and the option (the path
// may still be relative here). INVALID_ARGUMENT saying what is wrong.
absl::StatusOr<DatasetDeclaration> ParseDatasetOption(std::string_view value);

// OK when `name` is a dataset name (see above); INVALID_ARGUMENT otherwise.
absl::Status CheckDatasetName(std::string_view name);

// OK when `path` is absolute, normal, not "/" itself, free of control
// characters and at most limits::kMaxPathBytes long; INVALID_ARGUMENT
// naming the problem otherwise.
absl::Status CheckDatasetPath(std::string_view path);

// Checks a whole job's list: each entry as above, at most
// kMaxDatasetsPerJob entries, no name twice. Messages name the dataset.
absl::Status CheckDatasetList(const std::vector<DatasetDeclaration>& datasets);

// "GANTRY_DATASET_" + name.
std::string DatasetVariableName(std::string_view name);

}  // namespace gantry
