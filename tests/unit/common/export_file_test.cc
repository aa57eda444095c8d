// --export-file: NUL- or newline-separated NAME=value records, read from a
// path or a descriptor, and bad records named.
#include "common/export_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace gantry {
namespace export_file_test {

using Variables = std::map<std::string, std::string>;

std::string TempFile(const std::string& content) {
  char path[] = "/tmp/export_file_testXXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, content.data(), content.size()) ==
          static_cast<ssize_t>(content.size()));
  close(fd);
  return path;
}

TEST_CASE("NUL-separated records keep newlines and '=' in values",
          "[export_file]") {
  const std::string content("A=1\0B=two\nlines\0C=x=y\0\0", 24);
  const absl::StatusOr<Variables> parsed = ParseExportFile(content);
  REQUIRE(parsed.ok());
  CHECK(*parsed == Variables{{"A", "1"}, {"B", "two\nlines"}, {"C", "x=y"}});
}

TEST_CASE("newline-separated records, blank lines and CRLF", "[export_file]") {
  const absl::StatusOr<Variables> parsed =
      ParseExportFile("FOO=bar\r\n\nEMPTY=\nFOO=again\n");
  REQUIRE(parsed.ok());
  CHECK(*parsed == Variables{{"EMPTY", ""}, {"FOO", "again"}});
  CHECK(ParseExportFile("")->empty());
}

TEST_CASE("a record that is not NAME=value is named", "[export_file]") {
  for (const std::string bad : {"no_equals", "=value", "1X=2", "A B=1"}) {
    INFO(bad);
    const absl::StatusOr<Variables> parsed =
        ParseExportFile("OK=1\n" + bad + "\n");
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(parsed.status().message()),
               Catch::StartsWith("--export-file: record 2 ("));
  }
  CHECK_FALSE(ParseExportFile(std::string(kMaxExportFileBytes + 1, 'A')).ok());
}

TEST_CASE("read from a path or a descriptor", "[export_file]") {
  const std::string path = TempFile(std::string("X=1\0Y=2\0", 8));
  absl::StatusOr<Variables> read = ReadExportFile(path);
  REQUIRE(read.ok());
  CHECK(*read == Variables{{"X", "1"}, {"Y", "2"}});

  const int fd = open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 3);
  read = ReadExportFile(std::to_string(fd));
  close(fd);
  REQUIRE(read.ok());
  CHECK(*read == Variables{{"X", "1"}, {"Y", "2"}});
  std::remove(path.c_str());

  CHECK_THAT(std::string(ReadExportFile(path).status().message()),
             Catch::StartsWith("--export-file: cannot open"));
  CHECK_THAT(std::string(ReadExportFile("0").status().message()),
             Catch::Contains("standard input, output and error"));
  CHECK_THAT(std::string(ReadExportFile("/tmp").status().message()),
             Catch::Contains("is a directory"));
}

}  // namespace export_file_test
}  // namespace gantry
