// Splitting text into views of itself, for parsers of user input. Debian's
// abseil is built with its own string_view, so absl::StrSplit does not hand
// back std::string_view; this does. Pure, header-only.
#pragma once

#include <string_view>
#include <vector>

namespace gantry {

// Every field between separators, empty ones included ("a,,b" -> a, "", b;
// "" -> one empty field). The views point into `text`.
inline std::vector<std::string_view> SplitView(std::string_view text,
                                               char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

}  // namespace gantry
