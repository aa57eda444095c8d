// One dataset tree on disk: reading what a source directory holds (its
// manifest and content version) and copying it into a cache entry with
// verification and resumption. The cache's bookkeeping (which entries
// exist, who uses them, what to evict) is dataset_cache.h's.
//
// Everything here runs with the calling process's credentials. The agent
// runs it in a helper process that has become the job's user
// (dataset_stage_process.h), so the user's permissions decide what can be
// read, and the copy is written into the user's own 0700 cache directory.
// Symbolic links are never followed: a link in the tree is copied as a
// link, so the copy exposes nothing the link did not already.
//
// Layout of an entry: ENTRY/data/ is the copy (what GANTRY_DATASET_<NAME>
// names), ENTRY/manifest says it is complete. A copy in progress lives in
// ENTRY.partial/ with a journal of the files already copied and verified;
// an entry without its manifest is never served, and an interrupted copy is
// resumed from the journal. Files are not synced one by one (that made a
// tree of small files crawl): a journaled file counts on resume only if it
// still reads back as its journal line says, and the whole copy is synced
// once before its manifest is written.
//
// Thread-compatible: functions share no state; one stage per entry at a
// time (the cache guarantees it). A copy runs its own threads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry::agent {

// A file the user places at the top of a dataset to state its version
// themselves (any text: a hash list, a release tag). When present, the
// content version is its digest, and mtimes are not consulted.
inline constexpr char kDatasetManifestFile[] = ".gantry-manifest";

// Bounds that keep a runaway tree from stalling a node.
inline constexpr int kMaxDatasetDepth = 64;
inline constexpr size_t kMaxDatasetEntries = 2'000'000;

struct DatasetEntry {
  enum class Kind { kDirectory, kFile, kSymlink };
  Kind kind = Kind::kFile;
  std::string path;  // relative to the tree's top, '/'-separated
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint32_t mode = 0;        // permission bits
  std::string link_target;  // kSymlink
};

struct DatasetManifest {
  std::vector<DatasetEntry> entries;  // parents before children
  uint64_t total_bytes = 0;           // regular files' sizes
  uint64_t file_count = 0;
  // 32 hex digits: a digest of every entry's path, kind, size and mtime (or
  // of the user's .gantry-manifest). Equal versions mean equal content.
  std::string version;
};

// How a tree's content version is computed (--dataset=NAME,version=...):
//   kMetadata  every entry's path, kind, size and modification time, or the
//              user's .gantry-manifest when there is one: cheap (metadata
//              only), but blind to a writer that restores modification
//              times (rsync -t, tar);
//   kContent   every entry's path, kind and size and every file's SHA-256:
//              sees any change, at the cost of reading the whole tree at
//              every scan (each stage, on each node).
enum class DatasetVersionBy { kMetadata, kContent };

// Reads the tree under `source` (a directory; not followed if a link).
// Errors, each naming the path:
//   NOT_FOUND: `source` does not exist;
//   PERMISSION_DENIED: a directory in it cannot be read;
//   INVALID_ARGUMENT: `source` is not a directory, or holds something that
//     is not a file, directory or link (a FIFO, a device, a socket), or is
//     deeper or larger than the bounds above;
//   UNAVAILABLE: any other failure (I/O error).
absl::StatusOr<DatasetManifest> ScanDatasetTree(
    const std::string& source,
    DatasetVersionBy version_by = DatasetVersionBy::kMetadata);

// Called with (bytes done, bytes total) after each chunk copied.
using StageProgress = std::function<void(uint64_t, uint64_t)>;

struct CopyResult {
  uint64_t bytes_copied = 0;   // read from the source this time
  uint64_t bytes_resumed = 0;  // already in the partial copy, verified
  uint64_t bytes_reused = 0;   // copied from the earlier entry, not the source
};

// Files copied at once. Shared filesystems (NFS, Lustre, GPFS) serve several
// streams far faster than one, and the hashing spreads over the cores.
inline constexpr int kParallelFileCopies = 4;

struct CopyOptions {
  int parallel_files = kParallelFileCopies;
  // A complete entry of an earlier version of the same dataset, or "": a
  // file it holds with the size and modification time the scan found is
  // copied from there (local disk) instead of from the source, so a change
  // to one file of a tree reads only that file from shared storage.
  std::string earlier_entry{};
  // A content version (DatasetVersionBy::kContent) the copy must have, or
  // "": checked from the digests taken while copying (no second read of the
  // source); a copy of other content fails with ABORTED.
  std::string content_version{};
};

// Copies `source` as `manifest` describes it into `entry` (see the layout
// above): creates or resumes ENTRY.partial, then renames it to ENTRY with
// its manifest. Every file is checked against the manifest before it is
// copied (a file that changed since the scan fails with ABORTED, so the
// copy never mixes versions); each file's size and digest are journaled as
// it is copied (SHA-256 for a content version, which they must prove;
// CRC-32C otherwise), and a resumed copy keeps a journaled file only if it
// reads back so. Files are copied
// `options.parallel_files` at a time, and taken from
// `options.earlier_entry` where it holds them unchanged.
// Errors name the file:
//   PERMISSION_DENIED: a file cannot be read (as this process's user);
//   ABORTED: the source changed while it was being staged;
//   DATA_LOSS: a copy read back differs from what was written;
//   UNAVAILABLE: an I/O error reading the source;
//   INTERNAL: a failure writing the cache (the node's disk: full, failing);
//   ALREADY_EXISTS: `entry` is already complete (nothing is done).
absl::StatusOr<CopyResult> CopyDatasetTree(const std::string& source,
                                           const DatasetManifest& manifest,
                                           const std::string& entry,
                                           const StageProgress& progress,
                                           const CopyOptions& options = {});

// ENTRY's data directory, the partial copy's directory, and the file whose
// presence says the copy is complete.
std::string DatasetDataPath(const std::string& entry);
std::string DatasetPartialPath(const std::string& entry);
std::string DatasetCompletionPath(const std::string& entry);

// Whether `entry` holds a complete copy (its manifest exists); the total
// bytes recorded in it when it does. Read from a tree its user can write:
// the cache itself trusts only its own records (dataset_record.h).
absl::StatusOr<uint64_t> CompleteDatasetBytes(const std::string& entry);

}  // namespace gantry::agent
