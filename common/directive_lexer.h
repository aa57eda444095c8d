// The lexer of batch script directives: finds the `#SBATCH` and `#GANTRY`
// lines at the top of a script and splits each into option words, as sbatch
// does. What the words mean is the option table's business (job_options.h).
//
// The block starts after the optional `#!` line and ends at the first line
// that is neither blank nor a comment: sbatch reads no directive after the
// first command. Words are split on blanks with shell-like quoting: '...' is
// literal, "..." honours \" \\ \$ \` escapes, a backslash outside quotes
// escapes the next character, and a `#` word outside quotes starts a
// comment. Lines ending in "\r\n" read as lines ending in "\n".
//
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// One line of the directive block.
struct DirectiveLine {
  int line_number;           // 1-based, in the whole script
  std::string_view keyword;  // "#SBATCH" or "#GANTRY" (static storage)
  std::vector<std::string> words;
};

// The directive lines of `script`, in order.
// Errors: INVALID_ARGUMENT naming the keyword and line number for an
// unterminated quote ("#SBATCH line 3: unterminated ' quote").
absl::StatusOr<std::vector<DirectiveLine>> ExtractDirectiveLines(
    std::string_view script);

// The words of every directive line, in order. Errors as for
// ExtractDirectiveLines.
absl::StatusOr<std::vector<std::string>> ExtractDirectiveWords(
    std::string_view script);

}  // namespace gantry
