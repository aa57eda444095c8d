// The "-O/--Format" field lists of squeue and sinfo: comma-separated
// "name[:[.][width][suffix]]" items, each naming a field by Slurm's long
// name. Parsed into the letters of the command's -o layout, so both forms
// share one renderer (cli/slurm/percent_format.h).
//
// Pure; thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::cli {

struct LongField {
  char letter = 0;
  int width = 20;  // Slurm's width when none is given
  bool right = false;
  std::string suffix;
};

// `letter_of` answers the letter for a name (0: unknown); `names` are the
// known names, for the error. INVALID_ARGUMENT for an empty list or item,
// an unknown name (naming the closest known one), a "." with no width, or
// a width over 1000.
absl::StatusOr<std::vector<LongField>> ParseLongFields(
    std::string_view text,
    const std::function<char(std::string_view)>& letter_of,
    const std::vector<std::string>& names);

// A command's -O name for one of its -o letters.
struct FieldName {
  const char* name;
  char letter;
};

// The letter `name` stands for in `fields`, case-insensitive; 0 for none.
char LetterOfField(std::string_view name, const std::vector<FieldName>& fields);
// The names of `fields`, in order.
std::vector<std::string> NamesOfFields(const std::vector<FieldName>& fields);

// The known name closest to `word` (case-insensitive edit distance of at
// most 3), or "" when none is that close.
std::string ClosestName(std::string_view word,
                        const std::vector<std::string>& names);

}  // namespace gantry::cli
