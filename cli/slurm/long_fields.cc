#include "cli/slurm/long_fields.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/edit_distance.h"
#include "common/text.h"

namespace gantry::cli {

char LetterOfField(std::string_view name,
                   const std::vector<FieldName>& fields) {
  const std::string lower = absl::AsciiStrToLower(AsAbsl(name));
  for (const FieldName& field : fields) {
    if (absl::AsciiStrToLower(field.name) == lower) return field.letter;
  }
  return 0;
}

std::vector<std::string> NamesOfFields(const std::vector<FieldName>& fields) {
  std::vector<std::string> names;
  for (const FieldName& field : fields) names.emplace_back(field.name);
  return names;
}

std::string ClosestName(std::string_view word,
                        const std::vector<std::string>& names) {
  const std::string lower = absl::AsciiStrToLower(AsAbsl(word));
  std::size_t best_distance = 4;
  std::string best;
  for (const std::string& name : names) {
    const std::size_t distance =
        EditDistance(lower, absl::AsciiStrToLower(name), 3);
    if (distance < best_distance) {
      best_distance = distance;
      best = name;
    }
  }
  return best;
}

absl::StatusOr<std::vector<LongField>> ParseLongFields(
    std::string_view text,
    const std::function<char(std::string_view)>& letter_of,
    const std::vector<std::string>& names) {
  std::vector<LongField> fields;
  for (absl::string_view item : absl::StrSplit(AsAbsl(text), ',')) {
    if (item.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "empty field in \"", AsAbsl(text),
          "\": give field names separated by commas, e.g. JobID,Name:30"));
    }
    const std::size_t colon = item.find(':');
    const absl::string_view name = item.substr(0, colon);
    LongField field;
    field.letter = letter_of(std::string_view(name.data(), name.size()));
    if (field.letter == 0) {
      const std::string closest =
          ClosestName(std::string_view(name.data(), name.size()), names);
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid field \"", name, "\" in \"", AsAbsl(text), "\"",
          closest.empty() ? "" : absl::StrCat(" (did you mean ", closest, "?)"),
          ""));
    }
    if (colon != absl::string_view::npos) {
      absl::string_view rest = item.substr(colon + 1);
      std::size_t at = 0;
      if (at < rest.size() && rest[at] == '.') {
        field.right = true;
        ++at;
      }
      const std::size_t digits_start = at;
      int width = 0;
      while (at < rest.size() &&
             std::isdigit(static_cast<unsigned char>(rest[at]))) {
        width = width * 10 + (rest[at] - '0');
        if (width > 1000) {
          return absl::InvalidArgumentError(
              absl::StrCat("field width too large in \"", item, "\""));
        }
        ++at;
      }
      if (at > digits_start) {
        field.width = width;
      } else if (field.right) {
        return absl::InvalidArgumentError(absl::StrCat(
            "\"", item, "\": right-justified (.) needs a width, e.g. ", name,
            ":.10"));
      }
      field.suffix = std::string(rest.substr(at));
    }
    fields.push_back(std::move(field));
  }
  return fields;
}

}  // namespace gantry::cli
