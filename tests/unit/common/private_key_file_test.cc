// A private key that others on the host may read is refused, naming the
// file and its mode; a private one is read whole.
#include "common/private_key_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gantry {
namespace private_key_file_test {

std::string KeyFile(mode_t mode) {
  char pattern[] = "/tmp/gantry-key-XXXXXX";
  const int fd = mkstemp(pattern);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(pattern) << "-----BEGIN PRIVATE KEY-----\nabc\n";
  REQUIRE(chmod(pattern, mode) == 0);
  return pattern;
}

TEST_CASE("A key readable by its group or others is refused, naming both") {
  for (mode_t mode : {0644, 0640, 0604, 0620, 0602, 0666}) {
    const std::string path = KeyFile(mode);
    absl::StatusOr<std::string> read = ReadPrivateKeyFile(path, "the key");
    std::filesystem::remove(path);
    INFO(read.status().ToString());
    REQUIRE(read.status().code() == absl::StatusCode::kInvalidArgument);
    const std::string message(read.status().message());
    CHECK_THAT(message, Catch::Contains(path));
    CHECK_THAT(message, Catch::Contains(std::to_string(mode % 01000 / 0100) +
                                        std::to_string(mode % 0100 / 010) +
                                        std::to_string(mode % 010)));
    CHECK_THAT(message, Catch::Contains("chmod 600"));
  }
}

TEST_CASE("A private key file is read whole") {
  for (mode_t mode : {0600, 0400}) {
    const std::string path = KeyFile(mode);
    absl::StatusOr<std::string> read = ReadPrivateKeyFile(path, "the key");
    std::filesystem::remove(path);
    REQUIRE(read.ok());
    CHECK(*read == "-----BEGIN PRIVATE KEY-----\nabc\n");
  }
}

TEST_CASE("A missing key or a directory is an error naming it") {
  absl::StatusOr<std::string> missing =
      ReadPrivateKeyFile("/nonexistent/key.pem", "the key");
  CHECK_THAT(std::string(missing.status().message()),
             Catch::Contains("/nonexistent/key.pem"));
  absl::StatusOr<std::string> directory = ReadPrivateKeyFile("/tmp", "the key");
  CHECK_FALSE(directory.ok());
}

}  // namespace private_key_file_test
}  // namespace gantry
