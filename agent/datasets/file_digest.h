// The digest a dataset copy journals each file with (dataset_tree.cc), as
// text: SHA-256 where the copy must prove the content (a version by
// content is a digest of these), CRC-32C where it only has to catch what a
// crash did to a file before its copy was synced (a version by metadata).
// The journal of an interrupted copy says which it used, so the resumed
// copy checks each file the same way.
//
// Thread-compatible: one digest per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "agent/datasets/sha256_digest.h"

namespace gantry::agent {

enum class FileDigestKind : uint8_t { kSha256, kCrc32c };

class FileDigest {
 public:
  explicit FileDigest(FileDigestKind kind) : kind_(kind) {}
  void Add(const void* data, size_t size);
  // 64 hex digits for SHA-256 (the journal's first form, still read),
  // "crc32c:" and 8 hex digits for CRC-32C. Call once.
  std::string Text();
  // Which digest `text` is, if it is one of Text()'s forms.
  static std::optional<FileDigestKind> KindOf(absl::string_view text);

 private:
  FileDigestKind kind_;
  Sha256Digest sha256_;
  uint32_t crc_ = 0;
};

}  // namespace gantry::agent
