#include "common/pty_frames.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace pty_frames_test {

TEST_CASE("keystrokes and window sizes survive the framing, split anywhere",
          "[pty_frames]") {
  const std::string keys = std::string("ls\r\x03\xff\x1a", 6);
  const std::string stream = EncodePtyInput(keys) +
                             EncodePtyWindowSize(50, 300) +
                             EncodePtyInput("exit\r");
  CHECK(stream.size() == keys.size() + 1 + 6 + 5);  // 0xFF doubled
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    PtyInputDecoder decoder;
    std::string got = decoder.Feed(std::string_view(stream).substr(0, cut));
    uint16_t rows = 0;
    uint16_t cols = 0;
    bool resized = decoder.TakeResize(rows, cols);
    got += decoder.Feed(std::string_view(stream).substr(cut));
    resized = decoder.TakeResize(rows, cols) || resized;
    CHECK(got == keys + "exit\r");
    REQUIRE(resized);
    CHECK(rows == 50);
    CHECK(cols == 300);
    CHECK_FALSE(decoder.TakeResize(rows, cols));
  }
}

TEST_CASE("an escape that starts no frame of ours passes through",
          "[pty_frames]") {
  PtyInputDecoder decoder;
  CHECK(decoder.Feed(std::string("a\xff"
                                 "b",
                                 3)) == std::string("a\xff"
                                                    "b",
                                                    3));
}

}  // namespace pty_frames_test
}  // namespace gantry
