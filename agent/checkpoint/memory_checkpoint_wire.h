// The TCP exchange between two agents' memory checkpoint services
// (agent/checkpoint/memory_checkpoint_service.h). The client sends one request
// line:
//   "GMC1 PUT <token> <job> <rank> <step> <files> <bytes>"  push a replica
//   "GMC1 GET <token> <job> <rank> <step>"                  fetch a snapshot
// and the server answers "GO" (PUT), "GO <files> <bytes>" (GET) or
// "NO <reason>". Then the snapshot flows, file by file: a line
// "F <bytes> <path>" and that many bytes; the files' sizes add up to the
// announced total. A PUT ends with the server's "OK" or "NO <reason>" once
// the replica is in place. Every line ends with '\n'.
//
// Pure parsing and formatting, and blocking socket helpers with an
// absolute deadline; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "agent/checkpoint/memory_checkpoint_tree.h"
#include "agent/preflight/preflight_wire.h"

namespace gantry::agent {

// Connections use preflight_wire.h's helpers (ConnectBy, SendAllBy, ...).
using TransferDeadline = PreflightDeadline;

inline constexpr size_t kMemoryCheckpointTokenLength = 32;
inline constexpr size_t kMaxMemoryCheckpointLine = 640;

struct MemoryCheckpointRequest {
  enum class Kind { kPut, kGet };
  Kind kind = Kind::kGet;
  std::string token;
  uint64_t job = 0;
  uint32_t rank = 0;
  int64_t step = 0;
  uint64_t files = 0;  // PUT only
  uint64_t bytes = 0;  // PUT only
};

std::string FormatMemoryCheckpointRequest(const MemoryCheckpointRequest& r);
// INVALID_ARGUMENT for anything but the two forms above (lowercase hex
// token of kMemoryCheckpointTokenLength, files within kMaxSnapshotFiles),
// the trailing newline already removed.
absl::StatusOr<MemoryCheckpointRequest> ParseMemoryCheckpointRequest(
    const std::string& line);

// "GO" / "GO <files> <bytes>" -> files and bytes (0 for a bare "GO");
// "NO <reason>" -> FAILED_PRECONDITION with the reason; anything else
// INVALID_ARGUMENT.
struct GoAnswer {
  uint64_t files = 0;
  uint64_t bytes = 0;
};
absl::StatusOr<GoAnswer> ParseGoAnswer(const std::string& line);

// "F <bytes> <path>" with a path CheckSnapshotPath accepts.
absl::StatusOr<SnapshotFile> ParseSnapshotFileLine(const std::string& line);

// Sends the files of `listing` below `step_fd` (each opened afresh and
// checked by OpenSnapshotFile). Errors name the file or the connection.
absl::Status SendSnapshotFiles(int socket, int step_fd,
                               const SnapshotListing& listing, uid_t owner,
                               TransferDeadline deadline);
// Receives exactly `files` files of `bytes` bytes in all into `dir_fd`.
absl::Status ReceiveSnapshotFiles(int socket, int dir_fd, uint64_t files,
                                  uint64_t bytes, TransferDeadline deadline);

// Sends `line` and a newline.
bool SendLineBy(int socket, const std::string& line, TransferDeadline deadline);

}  // namespace gantry::agent
