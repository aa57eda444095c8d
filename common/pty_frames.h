// The byte stream from srun --pty to the agent that holds the task's
// pseudo-terminal: keystrokes as they are, with two escapes after 0xFF:
// 0xFF 0xFF is a literal 0xFF, 0xFF 'W' ROWS COLS (two bytes each, big
// endian) is a new window size. The other direction is the terminal's
// output, unframed. Pure; thread-safe (the decoder is one per stream).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gantry {

inline constexpr unsigned char kPtyEscape = 0xFF;

// Keystrokes, escaped.
std::string EncodePtyInput(std::string_view keys);
// A window-size frame.
std::string EncodePtyWindowSize(uint16_t rows, uint16_t cols);

// Undoes the framing, across reads: Feed each chunk; it returns the
// keystrokes and sets `resized` (with rows/cols) when a window size came.
class PtyInputDecoder {
 public:
  std::string Feed(std::string_view bytes);
  bool TakeResize(uint16_t& rows, uint16_t& cols);

 private:
  std::string pending_;  // an escape sequence not yet complete
  bool resized_ = false;
  uint16_t rows_ = 0;
  uint16_t cols_ = 0;
};

}  // namespace gantry
