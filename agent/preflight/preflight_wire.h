// The TCP exchange of the pre-flight gang check between two agents: the
// sender (a node's check) connects to its ring successor's listener and
// sends a header line "GPF1 <token> <bytes>\n", then kPreflightPings
// one-byte round trips (the receiver echoes each), then <bytes> bytes; the
// receiver answers "OK\n" once all arrived. Both ends time their part.
// The receiver echoes the first ping only once it took the transfer: the
// token is one of a check running on its node
// (agent/preflight/preflight_listener.h).
//
// Blocking socket helpers with an absolute deadline. Thread-safe (no
// shared state).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace gantry::agent {

using PreflightDeadline = std::chrono::steady_clock::time_point;

inline constexpr int kPreflightPings = 16;
// The most a sender may announce: the listener reads no more per check.
inline constexpr uint64_t kPreflightMaxBytes = 1ULL << 30;
inline constexpr size_t kPreflightMaxTokenLength = 64;
// The bandwidth transfer is written and read in pieces of this size.
inline constexpr size_t kPreflightChunkBytes = 256 * 1024;
// Between a sender's tries when the receiver did not take the transfer.
inline constexpr std::chrono::milliseconds kPreflightRetryPause{200};

struct PreflightHeader {
  std::string token;
  uint64_t bytes = 0;
};

std::string FormatPreflightHeader(const PreflightHeader& header);
// INVALID_ARGUMENT for anything but "GPF1 <hex token> <bytes>" within the
// limits above (the trailing newline already removed).
absl::StatusOr<PreflightHeader> ParsePreflightHeader(const std::string& line);

// What the sender measured.
struct PreflightSendFigures {
  double mbps = 0;           // bytes over first write to the receiver's OK
  double round_trip_us = 0;  // median of the pings
};

// Connects to host:port and runs the sender's side. A connection the
// receiver's listener closes before it answers the first ping was not
// taken (the receiver's check has not registered the token yet, or the
// listener is busy): it is tried again every kPreflightRetryPause until
// the deadline. UNAVAILABLE (connect refused, reset during the transfer),
// DEADLINE_EXCEEDED, ABORTED (never taken, at every try); the message
// says what failed.
absl::StatusOr<PreflightSendFigures> SendPreflight(
    const std::string& host, uint32_t port, const PreflightHeader& header,
    PreflightDeadline deadline);

// A non-blocking connected socket to host:port (TCP_NODELAY), by the
// deadline. UNAVAILABLE or DEADLINE_EXCEEDED naming the peer.
absl::StatusOr<int> ConnectBy(const std::string& host, uint32_t port,
                              PreflightDeadline deadline);

// Socket helpers shared with the listener. Each returns false (errno set;
// ETIMEDOUT past the deadline) when the transfer did not complete.
bool SendAllBy(int fd, const char* data, size_t size,
               PreflightDeadline deadline);
bool ReceiveAllBy(int fd, char* data, size_t size, PreflightDeadline deadline);
// Reads one '\n'-terminated line of at most `limit` bytes, byte by byte
// (the bulk data follows it on the stream).
bool ReceiveLineBy(int fd, std::string& line, size_t limit,
                   PreflightDeadline deadline);

}  // namespace gantry::agent
