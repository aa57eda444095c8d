#include "common/text.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"

namespace gantry {

std::string_view TrimChars(std::string_view text, std::string_view chars) {
  const std::size_t first = text.find_first_not_of(chars);
  if (first == std::string_view::npos) return text.substr(text.size());
  return text.substr(first, text.find_last_not_of(chars) - first + 1);
}

std::string_view TrimLeft(std::string_view text) {
  const std::size_t first = text.find_first_not_of(kAsciiWhitespace);
  return text.substr(first == std::string_view::npos ? text.size() : first);
}

std::string_view Trim(std::string_view text) {
  return TrimChars(text, kAsciiWhitespace);
}

bool IsDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

bool IsLowerHex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return absl::ascii_tolower(static_cast<unsigned char>(x)) ==
                  absl::ascii_tolower(static_cast<unsigned char>(y));
         });
}

std::string EscapeForMessage(std::string_view text, std::size_t max_chars) {
  if (text.size() > max_chars) {
    return absl::CHexEscape(AsAbsl(text.substr(0, max_chars))) + "...";
  }
  return absl::CHexEscape(AsAbsl(text));
}

std::string QuoteForMessage(std::string_view text, std::size_t max_chars) {
  return "\"" + EscapeForMessage(text, max_chars) + "\"";
}

std::string SourceLine(std::string_view source, int line) {
  return std::string(source) + ":" + std::to_string(line) + ": ";
}

}  // namespace gantry
