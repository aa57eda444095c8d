// A fresh directory under /tmp for one test, removed with everything in it
// when the test ends. Mode 0700, as mkdtemp makes it: closed to other users
// (tests that act as another user open it up themselves).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace gantry::testing {

struct TempDir {
  // label names the test in the directory's name, to tell leftovers apart.
  explicit TempDir(std::string_view label = "test") {
    std::string pattern = "/tmp/gantry-" + std::string(label) + "-XXXXXX";
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes a file of the directory (name relative to it); returns its path.
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
    return path + "/" + name;
  }

  std::string path;
};

}  // namespace gantry::testing
