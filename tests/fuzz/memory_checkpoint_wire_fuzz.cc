// libFuzzer target for what one agent reads from another over the
// in-memory checkpoint exchange (agent/checkpoint/memory_checkpoint_wire.h):
// the request line, the answer line, and a snapshot's file stream received into
// a fresh directory.
//
// Input: the first line is parsed as a request, an answer and a file line;
// the second holds "FILES BYTES"; the rest is the stream. Beyond "no
// crash": a request that parses formats back to itself, and a received
// snapshot holds only directories and regular files below the directory
// it was received into, no more bytes than announced.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "agent/checkpoint/memory_checkpoint_wire.h"
#include "agent/system/scoped_fd.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

std::string NextLine(std::string& input) {
  const size_t newline = input.find('\n');
  std::string line = input.substr(0, newline);
  input = newline == std::string::npos ? "" : input.substr(newline + 1);
  return line;
}

void CheckTree(const std::filesystem::path& root, uint64_t bytes) {
  uint64_t total = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(root)) {
    Check(!entry.is_symlink());
    Check(entry.is_directory() || entry.is_regular_file());
    if (entry.is_regular_file()) total += entry.file_size();
  }
  Check(total <= bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace gantry::agent;
  if (size > 65536) return 0;
  std::string input(reinterpret_cast<const char*>(data), size);
  const std::string first = NextLine(input);
  if (auto request = ParseMemoryCheckpointRequest(first); request.ok()) {
    Check(FormatMemoryCheckpointRequest(*request) == first);
  }
  (void)ParseGoAnswer(first);
  (void)ParseSnapshotFileLine(first);

  const std::string counts = NextLine(input);
  uint64_t files = 0;
  uint64_t bytes = 0;
  if (std::sscanf(counts.c_str(), "%lu %lu", &files, &bytes) != 2 ||
      files > 64) {
    return 0;
  }
  char pattern[] = "/tmp/gantry-fuzz-mcw-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) return 0;
  const std::filesystem::path root(pattern);
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0) {
    ScopedFd reader(pair[0]);
    {
      ScopedFd writer(pair[1]);
      // Fits the socket buffer (64 KiB at most), then end of file.
      (void)!::write(writer.get(), input.data(), input.size());
    }
    ScopedFd dir(::open(pattern, kSnapshotDirectoryFlags));
    const absl::Status received = ReceiveSnapshotFiles(
        reader.get(), dir.get(), files, bytes,
        std::chrono::steady_clock::now() + std::chrono::seconds(1));
    Check(received.ok() || !received.message().empty());
    CheckTree(root, bytes);
  }
  std::filesystem::remove_all(root);
  return 0;
}
