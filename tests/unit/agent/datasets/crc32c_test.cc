// CRC-32C and the journal's file digests: the published check value, the
// instruction and the table agreeing on every length and alignment, and
// the digest texts a journal line may hold.
#include "agent/datasets/crc32c.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "agent/datasets/file_digest.h"

namespace gantry::agent {
namespace crc32c_test {

TEST_CASE("CRC-32C of the check string is the published value", "[crc32c]") {
  const std::string check = "123456789";
  CHECK(Crc32c(0, check.data(), check.size()) == 0xE3069283u);
  CHECK(Crc32cByTable(0, check.data(), check.size()) == 0xE3069283u);
  CHECK(Crc32c(0, nullptr, 0) == 0);
}

TEST_CASE("CRC-32C continues across pieces, by instruction as by table",
          "[crc32c]") {
  std::vector<unsigned char> bytes(1000);
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<unsigned char>(i * 131 + 7);
  }
  for (size_t offset : {0, 1, 3, 7}) {
    for (size_t length : {0, 1, 7, 8, 9, 63, 500, 993}) {
      const unsigned char* at = bytes.data() + offset;
      const uint32_t whole = Crc32c(0, at, length);
      CHECK(whole == Crc32cByTable(0, at, length));
      const size_t half = length / 2;
      CHECK(Crc32c(Crc32c(0, at, half), at + half, length - half) == whole);
    }
  }
}

TEST_CASE("a journal's digest texts say which digest they are", "[crc32c]") {
  FileDigest crc(FileDigestKind::kCrc32c);
  crc.Add("123456789", 9);
  const std::string crc_text = crc.Text();
  CHECK(crc_text == "crc32c:e3069283");
  CHECK(FileDigest::KindOf(crc_text) == FileDigestKind::kCrc32c);
  FileDigest sha(FileDigestKind::kSha256);
  sha.Add("abc", 3);
  const std::string sha_text = sha.Text();
  CHECK(sha_text ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(FileDigest::KindOf(sha_text) == FileDigestKind::kSha256);
  for (const char* bad :
       {"", "crc32c:", "crc32c:e306928", "crc32c:E3069283", "crc32c:e306928g",
        "md5:e3069283", "ba7816bf", "crc32c:e3069283 "}) {
    CHECK_FALSE(FileDigest::KindOf(bad).has_value());
  }
}

}  // namespace crc32c_test
}  // namespace gantry::agent
