// libFuzzer target for the srun --pty input framing the agent decodes
// (common/pty_frames.h): bytes from the network, on a root process.
//
// Beyond "no crash": decoding in two pieces split anywhere gives what one
// piece gives, and encoding the decoded keystrokes and decoding them again
// gives them back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/pty_frames.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  gantry::PtyInputDecoder whole;
  const std::string keys = whole.Feed(input);
  uint16_t rows = 0;
  uint16_t cols = 0;
  const bool resized = whole.TakeResize(rows, cols);
  const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  gantry::PtyInputDecoder split;
  std::string split_keys = split.Feed(input.substr(0, cut));
  uint16_t split_rows = 0;
  uint16_t split_cols = 0;
  bool split_resized = split.TakeResize(split_rows, split_cols);
  split_keys += split.Feed(input.substr(cut));
  split_resized = split.TakeResize(split_rows, split_cols) || split_resized;
  Check(split_keys == keys);
  Check(split_resized == resized);
  if (resized) Check(split_rows == rows && split_cols == cols);
  gantry::PtyInputDecoder again;
  Check(again.Feed(gantry::EncodePtyInput(keys)) == keys);
  return 0;
}
