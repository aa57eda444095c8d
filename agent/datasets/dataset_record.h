// The dataset cache's own record of each entry, kept where no user can
// write: ROOT/.records (root's, 0700), one small file per entry, named
// <uid>.<name>.<version>. The entries themselves live in directories their
// users own, so everything the cache must be able to trust after a restart
// (whose entry it is, its source, its size, when it was last used, and the
// fingerprint that proves its files are still the ones copied) is here.
//
// A record is replaced atomically: the new text goes to NAME.tmp, is
// synced, and is renamed over NAME, and the directory is synced; each
// record ends with a digest of its text, so a record that is torn, edited
// or otherwise corrupt is detected, dropped, and its entry treated as
// unknown. A partial record says a copy was started (its files live in
// ENTRY.partial and may be resumed); a complete one that ENTRY is a
// finished, verified copy.
//
// Thread-compatible: the cache calls these under its own lock.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry::agent {

struct DatasetRecord {
  uid_t uid = 0;
  std::string name;
  std::string version;
  bool complete = false;  // false: a copy started, maybe partial
  std::string source;
  uint64_t bytes = 0;  // the dataset's size (what the cache charges)
  uint64_t files = 0;
  int64_t last_use_ms = 0;
  std::string fingerprint;  // complete: the entry's MeasureTree fingerprint
};

// ROOT/.records, created (0700) when absent. INTERNAL when it cannot be
// made, or is not a directory that only the agent's user can use.
absl::StatusOr<std::string> OpenDatasetRecords(const std::string& root);

struct LoadedDatasetRecords {
  std::vector<DatasetRecord> records;
  std::vector<std::string> dropped;  // corrupt or unfinished files removed
};

// Every record in `dir`; temporary and corrupt files are removed.
LoadedDatasetRecords LoadDatasetRecords(const std::string& dir);

// Writes (or replaces) the record of (record.uid, .name, .version).
absl::Status WriteDatasetRecord(const std::string& dir,
                                const DatasetRecord& record);

// Removes the record of (uid, name, version); OK when there is none.
absl::Status RemoveDatasetRecord(const std::string& dir, uid_t uid,
                                 const std::string& name,
                                 const std::string& version);

}  // namespace gantry::agent
