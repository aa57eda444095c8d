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
  // As Slurm's squeue and sinfo treat them: an unknown letter is left out
  // and added to `*unknown` (the caller says so on stderr) instead of
  // failing the whole format.
  static absl::StatusOr<PercentFormat> Parse(std::string_view format,
                                             std::string_view letters,
                                             std::vector<char>* unknown);

  // A field added at the end: LETTER padded (and cut) to `width` (0: as
  // long as the value), right-aligned when `right`, followed by `suffix`.
  // What squeue -O and sinfo -O build their layout from.
  void AddField(char letter, int width, bool right, std::string suffix);
  // sinfo's "%#P" / "%#N": fields whose width is the longest of their
  // values in `rows` (one value per field, as Render takes them), at least
  // `minimum`.
  void FitWidths(const std::vector<std::vector<std::string>>& rows,
                 int minimum);
  // Slurm keeps the blanks a left-aligned last field is padded with in -O
  // layouts; by default they are dropped.
  void KeepTrailingBlanks() { keep_trailing_blanks_ = true; }

  // "%all" in `format` as Slurm takes it: every letter of `letters`, each
  // followed by a vertical bar.
  static std::string ExpandAll(std::string_view format,
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
    bool fit = false;  // "#": as wide as the longest value (FitWidths)
  };
  std::vector<Item> items_;
  bool keep_trailing_blanks_ = false;
};

}  // namespace gantry::cli
