#include "agent/datasets/file_digest.h"

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "agent/datasets/crc32c.h"
#include "common/text.h"

namespace gantry::agent {
namespace {

constexpr absl::string_view kCrc32cPrefix = "crc32c:";

}  // namespace

void FileDigest::Add(const void* data, size_t size) {
  if (kind_ == FileDigestKind::kSha256) {
    sha256_.Add(data, size);
  } else {
    crc_ = Crc32c(crc_, data, size);
  }
}

std::string FileDigest::Text() {
  if (kind_ == FileDigestKind::kSha256) return sha256_.Hex();
  return absl::StrFormat("%s%08x", kCrc32cPrefix, crc_);
}

std::optional<FileDigestKind> FileDigest::KindOf(absl::string_view text) {
  if (text.size() == 64 && IsLowerHex(AsStd(text)))
    return FileDigestKind::kSha256;
  if (absl::StartsWith(text, kCrc32cPrefix)) {
    const absl::string_view hex = text.substr(kCrc32cPrefix.size());
    if (hex.size() == 8 && IsLowerHex(AsStd(hex)))
      return FileDigestKind::kCrc32c;
  }
  return std::nullopt;
}

}  // namespace gantry::agent
