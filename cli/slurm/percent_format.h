// The "%[.|-][WIDTH]LETTER" format strings of squeue -o and sinfo -o,
// parsed once: literal text and fields. With a width a value is padded to
// it and cut at it (as Slurm does); "." aligns right, otherwise left. "%%"
// is a percent sign. Each command supplies its own letters and values.
//
// Pure; a parsed PercentFormat is immutable and safe to share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::cli {

class PercentFormat {
 public:
  // `letters`: the field letters the command knows. INVALID_ARGUMENT names
  // an unknown letter or a "%" with none, and lists the known letters.
  static absl::StatusOr<PercentFormat> Parse(std::string_view format,
                                             std::string_view letters);

  // The field letters in order (one per value Render takes).
  std::vector<char> Fields() const;

  // The header line: each field's name from `header_of`.
  std::string Header(const char* (*header_of)(char)) const;

  // The line (with "\n") for one value per field, in Fields() order.
  // Trailing blanks are dropped.
  std::string Render(const std::vector<std::string>& values) const;

 private:
  struct Item {
    std::string literal;  // copied as is when letter is 0
    char letter = 0;
    int width = 0;  // 0: as long as the value
    bool right = false;
  };
  std::vector<Item> items_;
};

}  // namespace gantry::cli
