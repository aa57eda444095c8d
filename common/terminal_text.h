// Text that users and agents supply and that others see on their
// terminals (job names, paths, drain reasons, node features, ...).
//
// CheckDisplayText is what gantryd applies before storing such text: no
// control characters, well-formed UTF-8, a bounded length. EscapeForTerminal
// is what the CLI applies when printing it anyway (records stored before
// the check existed, free text from agents): an escape sequence in a job
// name must never reach an admin's terminal raw, where it could retitle
// the window, clear the screen or forge lines of a listing.
//
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace gantry {

enum class LineBreaks {
  kRefused,  // one-line text: names, paths, reasons
  kAllowed,  // multi-line text (a topology file): \n, \r and \t pass
};

// OK when `value` is at most `max_bytes` long, well-formed UTF-8 and free
// of control characters (C0, DEL, C1); INVALID_ARGUMENT naming `field`, the
// offending character and its byte offset (or the limit) otherwise.
absl::Status CheckDisplayText(std::string_view field, std::string_view value,
                              size_t max_bytes,
                              LineBreaks line_breaks = LineBreaks::kRefused);

// `text` with every control character (C0, DEL, C1) and every byte that is
// not part of well-formed UTF-8 replaced by a visible escape: \n, \r, \t,
// or \xHH (per byte; C1 characters as \u0080..\u009f). Printable text,
// including non-ASCII letters and backslashes, passes unchanged.
std::string EscapeForTerminal(std::string_view text);

// `text` with every byte that is not part of well-formed UTF-8 replaced by
// U+FFFD; everything else, control characters included, unchanged. For
// JSON output, whose library escapes control characters but refuses
// ill-formed UTF-8.
std::string ReplaceInvalidUtf8(std::string_view text);

}  // namespace gantry
