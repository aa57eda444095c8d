// Small text helpers that the parsers of user input share: trimming, digit
// checks, ASCII case folding, quoting a value for an error message, and
// joining parts into a string.
//
// They work on std::string_view. Debian's abseil is built with its own
// absl::string_view, which neither converts from nor to std::string_view, so
// absl's string functions do not take ours; AsAbsl and AsStd bridge the two
// where absl is needed (and are no-ops where the two types match).
//
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gantry {

// What absl::ascii_isspace counts as white space.
inline constexpr std::string_view kAsciiWhitespace = " \t\n\v\f\r";

inline absl::string_view AsAbsl(std::string_view text) {
  return absl::string_view(text.data(), text.size());
}

inline std::string_view AsStd(absl::string_view text) {
  return std::string_view(text.data(), text.size());
}

// The status's message as a std::string_view (empty for OK).
inline std::string_view StatusMessage(const absl::Status& status) {
  return AsStd(status.message());
}

// `text` without the characters of `chars` at its start and end. The view
// points into `text`.
std::string_view TrimChars(std::string_view text, std::string_view chars);

// `text` without leading ASCII white space (kAsciiWhitespace).
std::string_view TrimLeft(std::string_view text);

// `text` without ASCII white space (kAsciiWhitespace) at either end.
std::string_view Trim(std::string_view text);

// Whether `text` is one or more ASCII digits: false for "", signs, spaces.
bool IsDigits(std::string_view text);

// Whether every character of `text` is a lowercase hex digit (0-9, a-f), as
// BytesToHexString and digests write them: true for "" (callers that need
// a length check it).
bool IsLowerHex(std::string_view text);

// Whether `a` and `b` are equal ignoring ASCII case.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// `text` with C escapes for quotes, backslashes and non-printable bytes
// (absl::CHexEscape: "\n", "\x01", ...), cut to its first `max_chars`
// characters (before escaping) with "..." added when longer: a
// pathological value must not make a megabyte-long or multi-line error
// message.
std::string EscapeForMessage(std::string_view text, std::size_t max_chars);

// EscapeForMessage in double quotes: "\"node[1-\\n\"", "\"aaaa...\"".
std::string QuoteForMessage(std::string_view text, std::size_t max_chars);

// "SOURCE:LINE: ", the start of a parse error about one line of a file.
std::string SourceLine(std::string_view source, int line);

namespace text_internal {

template <typename T>
void AppendPart(std::string& out, const T& part) {
  if constexpr (std::is_same_v<T, char>) {
    out.push_back(part);
  } else if constexpr (std::is_integral_v<T>) {
    out += std::to_string(part);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out.append(std::string_view(part));
  } else {
    out.append(part.data(), part.size());  // absl::string_view
  }
}

}  // namespace text_internal

// absl::StrCat for parts that absl::StrCat cannot take: std::string_view
// (see above), besides strings, single characters and integers.
template <typename... Parts>
std::string Concat(const Parts&... parts) {
  std::string out;
  (text_internal::AppendPart(out, parts), ...);
  return out;
}

}  // namespace gantry
