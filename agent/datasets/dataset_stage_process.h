// The dataset worker the agent uses as root: every scan, copy and removal
// runs in a helper process (the agent's own binary, started with
// kDatasetWorkerFlag) that first becomes the job's user for good (groups,
// gid, uid; real, effective and saved) and only then touches a path, so the
// user's permissions alone decide what of the shared tree can be read and
// what in the cache can be changed. The helper is a fresh process started
// with posix_spawn (safe from the agent's threads), so it may allocate and
// use the library freely; it reports over a pipe, one line per message:
//
//   manifest VERSION BYTES FILES      (scan)
//   progress DONE TOTAL               (copy, as it goes)
//   copied BYTES_COPIED BYTES_RESUMED BYTES_REUSED (copy, at the end)
//   removed                           (remove)
//   error CODE MESSAGE                (any; CODE is an absl::StatusCode)
//
// The helper dies with the agent (PR_SET_PDEATHSIG, armed once it is the
// user): a copy left behind by a killed agent is resumed by the next one,
// never written by two processes at once.
//
// Thread-safe: each call has its own process and pipe. The thread that
// spawns a helper waits for it, so the helper's parent-death signal (sent
// when the spawning thread ends) fires only when the agent dies.
#pragma once

#include <string>
#include <vector>

#include "agent/datasets/dataset_cache.h"

namespace gantry::agent {

// argv[1] of a helper process.
inline constexpr char kDatasetWorkerFlag[] = "--dataset-worker";

// The agent's own executable, for the helper. Spawned by this name, not by
// the path it resolves to at start: the kernel resolves /proc/self/exe of
// the spawned child (which shares the agent's memory until it execs) to the
// inode the agent itself runs from, so a package upgrade that renames a
// new binary over the old path, or removes it, leaves the helper the same
// build as the agent that speaks to it (the path would name the new build,
// whose helper protocol may differ, or nothing at all).
inline constexpr char kOwnBinary[] = "/proc/self/exe";

class UserProcessDatasetWorker : public DatasetWorker {
 public:
  // `binary`: the agent's own executable (kOwnBinary).
  explicit UserProcessDatasetWorker(std::string binary);

  absl::StatusOr<DatasetManifest> Scan(const DatasetUser& user,
                                       const std::string& source,
                                       DatasetVersionBy version_by) override;
  absl::StatusOr<CopyResult> Copy(const DatasetUser& user,
                                  const std::string& source,
                                  const std::string& version,
                                  DatasetVersionBy version_by,
                                  const std::string& entry,
                                  const std::string& earlier_entry,
                                  const StageProgress& progress) override;
  absl::Status Remove(const DatasetUser& user,
                      const std::string& path) override;

 private:
  // Runs the helper with `operation` and reads its lines; `progress` gets
  // progress lines; returns the final line's words.
  absl::StatusOr<std::vector<std::string>> Run(
      const DatasetUser& user, const std::vector<std::string>& operation,
      const StageProgress& progress);

  const std::string binary_;
};

// The helper's main: `args` are argv[2..]: UID GID GROUPS(comma list, may
// be "-") SWITCH(0|1) OPERATION ARGS... Writes the lines above to standard
// output; returns the exit status.
int RunDatasetWorker(const std::vector<std::string>& args);

}  // namespace gantry::agent
