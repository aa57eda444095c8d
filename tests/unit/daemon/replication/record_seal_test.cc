// The sealing of what controllers keep in etcd: a record opens only under
// the etcd key it was sealed for and with the cluster key it was sealed
// with; anything else is refused and counted, once per distinct value.
#include "daemon/replication/record_seal.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace gantry::replication {
namespace record_seal_test {

constexpr char kKey[] = "0123456789abcdef0123456789abcdef";
constexpr char kOtherKey[] = "fedcba9876543210fedcba9876543210";

TEST_CASE("A sealed record opens under its key and hides its content") {
  RecordSeal seal(kKey);
  const std::string secret = "#!/bin/bash\nexport TOKEN=hunter2\n";
  const std::string sealed =
      seal.Seal("/gantry/log/00000000000000000007", secret);
  CHECK(sealed.find("hunter2") == std::string::npos);
  absl::StatusOr<std::string> opened =
      seal.Open("/gantry/log/00000000000000000007", sealed);
  REQUIRE(opened.ok());
  CHECK(*opened == secret);
  // Deterministic: a retried append writes the very same bytes.
  CHECK(seal.Seal("/gantry/log/00000000000000000007", secret) == sealed);
  // Another record never shares its nonce (bytes 3..15).
  CHECK(seal.Seal("/gantry/log/00000000000000000008", secret).substr(3, 12) !=
        sealed.substr(3, 12));
  CHECK(seal.forged_count() == 0);
}

TEST_CASE(
    "Forged, altered, moved and foreign records are refused and counted") {
  RecordSeal seal(kKey);
  const std::string key = "/gantry/log/00000000000000000007";
  const std::string sealed = seal.Seal(key, "batch");

  SECTION("in clear") {
    absl::Status refused = seal.Open(key, "batch").status();
    CHECK(IsForged(refused));
    CHECK(refused.code() == absl::StatusCode::kPermissionDenied);
  }
  SECTION("one byte altered") {
    std::string altered = sealed;
    altered[altered.size() / 2] ^= 1;
    CHECK(IsForged(seal.Open(key, altered).status()));
  }
  SECTION("replayed at another index or in another cluster's prefix") {
    CHECK(IsForged(
        seal.Open("/gantry/log/00000000000000000008", sealed).status()));
    CHECK(IsForged(
        seal.Open("/other/log/00000000000000000007", sealed).status()));
  }
  SECTION("sealed with another cluster key") {
    RecordSeal other(kOtherKey);
    CHECK(IsForged(seal.Open(key, other.Seal(key, "batch")).status()));
  }
  SECTION("truncated") {
    CHECK(IsForged(seal.Open(key, sealed.substr(0, 10)).status()));
  }
  CHECK(seal.forged_count() >= 1);
  CHECK(!seal.last_forged_key().empty());
}

TEST_CASE("The same forgery seen again is counted once") {
  RecordSeal seal(kKey);
  CHECK_FALSE(seal.Open("/gantry/leader", "evil").ok());
  CHECK_FALSE(seal.Open("/gantry/leader", "evil").ok());
  CHECK(seal.forged_count() == 1);
  CHECK_FALSE(seal.Open("/gantry/leader", "eviler").ok());
  CHECK(seal.forged_count() == 2);
  CHECK(seal.last_forged_key() == "/gantry/leader");
}

TEST_CASE("The snapshot token comes from the cluster key alone") {
  RecordSeal a(kKey);
  RecordSeal b(kKey);
  RecordSeal other(kOtherKey);
  CHECK(a.snapshot_token().size() == 64);
  CHECK(a.snapshot_token() == b.snapshot_token());
  CHECK(a.snapshot_token() != other.snapshot_token());
  CHECK(a.snapshot_token().find("0123456789abcdef") == std::string::npos);
}

class KeyFile {
 public:
  KeyFile(const std::string& content, mode_t mode) {
    path_ = (std::filesystem::temp_directory_path() /
             ("gantry-seal-test-" + std::to_string(getpid()) + ".key"))
                .string();
    std::ofstream(path_, std::ios::binary) << content;
    chmod(path_.c_str(), mode);
  }
  ~KeyFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST_CASE("The cluster key file must be private and long enough") {
  {
    KeyFile file(kKey, 0600);
    absl::StatusOr<std::unique_ptr<RecordSeal>> seal =
        RecordSeal::FromKeyFile(file.path());
    REQUIRE(seal.ok());
    CHECK((*seal)->snapshot_token() == RecordSeal(kKey).snapshot_token());
  }
  for (mode_t mode : {0644, 0640, 0602, 0660}) {
    KeyFile file(kKey, mode);
    absl::Status refused = RecordSeal::FromKeyFile(file.path()).status();
    CHECK(refused.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(refused.message()),
               Catch::Contains(file.path()) && Catch::Contains("chmod 600"));
  }
  {
    KeyFile file("short", 0600);
    CHECK(RecordSeal::FromKeyFile(file.path()).status().code() ==
          absl::StatusCode::kFailedPrecondition);
  }
  absl::Status missing =
      RecordSeal::FromKeyFile("/nonexistent/replication.key").status();
  CHECK(missing.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(missing.message()),
             Catch::Contains("head -c 32 /dev/urandom"));
}

}  // namespace record_seal_test
}  // namespace gantry::replication
