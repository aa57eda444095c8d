#include "common/pty_frames.h"

namespace gantry {

std::string EncodePtyInput(std::string_view keys) {
  std::string out;
  out.reserve(keys.size());
  for (char c : keys) {
    out += c;
    if (static_cast<unsigned char>(c) == kPtyEscape) out += c;
  }
  return out;
}

std::string EncodePtyWindowSize(uint16_t rows, uint16_t cols) {
  std::string out;
  out += static_cast<char>(kPtyEscape);
  out += 'W';
  out += static_cast<char>(rows >> 8);
  out += static_cast<char>(rows & 0xFF);
  out += static_cast<char>(cols >> 8);
  out += static_cast<char>(cols & 0xFF);
  return out;
}

std::string PtyInputDecoder::Feed(std::string_view bytes) {
  std::string keys;
  for (char c : bytes) {
    if (pending_.empty()) {
      if (static_cast<unsigned char>(c) == kPtyEscape) {
        pending_ += c;
      } else {
        keys += c;
      }
      continue;
    }
    pending_ += c;
    if (pending_.size() == 2 && pending_[1] != 'W') {
      // 0xFF 0xFF: the byte itself; anything else is no frame of ours
      // and passes through unchanged.
      if (static_cast<unsigned char>(pending_[1]) == kPtyEscape) {
        keys += pending_[1];
      } else {
        keys += pending_;
      }
      pending_.clear();
    } else if (pending_.size() == 6) {
      auto byte = [this](size_t i) {
        return static_cast<uint16_t>(static_cast<unsigned char>(pending_[i]));
      };
      rows_ = static_cast<uint16_t>(byte(2) << 8 | byte(3));
      cols_ = static_cast<uint16_t>(byte(4) << 8 | byte(5));
      resized_ = true;
      pending_.clear();
    }
  }
  return keys;
}

bool PtyInputDecoder::TakeResize(uint16_t& rows, uint16_t& cols) {
  if (!resized_) return false;
  rows = rows_;
  cols = cols_;
  resized_ = false;
  return true;
}

}  // namespace gantry
