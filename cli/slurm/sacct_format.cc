#include "cli/slurm/sacct_format.h"

#include <cstdlib>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/edit_distance.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

constexpr int kMaxWidth = 1000;

// The fields nearest to `name` ("Start or State"); empty when none is
// close.
std::string ClosestField(std::string_view name) {
  constexpr size_t kMaxDistance = 3;
  size_t best_distance = kMaxDistance + 1;
  std::vector<std::string> best;
  const std::string wanted = absl::AsciiStrToLower(AsAbsl(name));
  for (const SacctField& field : SacctFields()) {
    const size_t distance =
        EditDistance(wanted, absl::AsciiStrToLower(field.name), kMaxDistance);
    if (distance < best_distance) {
      best_distance = distance;
      best.clear();
    }
    if (distance == best_distance) best.push_back(field.name);
  }
  return absl::StrJoin(best, " or ");
}

// One column as print_fields prints it: padded or cut to |width|.
void AppendFixed(std::string& line, std::string_view value, int width,
                 bool mark_cut) {
  const size_t size = static_cast<size_t>(std::abs(width));
  std::string text(value.substr(0, size));
  if (mark_cut && value.size() > size && size > 0) text.back() = '+';
  const std::string padding(size - text.size(), ' ');
  if (width >= 0) {
    absl::StrAppend(&line, padding, text, " ");
  } else {
    absl::StrAppend(&line, text, padding, " ");
  }
}

}  // namespace

absl::StatusOr<SacctFormat> SacctFormat::Parse(std::string_view list,
                                               bool skip_unknown) {
  SacctFormat format;
  for (absl::string_view piece :
       absl::StrSplit(AsAbsl(list), absl::ByAnyChar(", "), absl::SkipEmpty())) {
    const std::string_view item = AsStd(piece);
    std::string_view name = item;
    std::optional<int> width;
    if (const size_t percent = item.find('%');
        percent != std::string_view::npos) {
      name = item.substr(0, percent);
      int parsed = 0;
      if (!absl::SimpleAtoi(AsAbsl(item.substr(percent + 1)), &parsed) ||
          parsed == 0 || std::abs(parsed) > kMaxWidth) {
        return absl::InvalidArgumentError(absl::StrCat(
            "invalid field width in \"", AsAbsl(item.substr(0, 60)),
            "\" (FIELD%N: N columns right-aligned, FIELD%-N left-aligned; "
            "N from 1 to ",
            kMaxWidth, ")"));
      }
      width = parsed;
    }
    const SacctField* field = FindSacctField(name);
    if (field == nullptr) {
      if (skip_unknown) continue;
      std::string message =
          absl::StrCat("invalid field \"", AsAbsl(name.substr(0, 60)), "\"");
      if (const std::string best = ClosestField(name); !best.empty()) {
        absl::StrAppend(&message, " (did you mean ", best, "?)");
      }
      absl::StrAppend(&message, "; sacct -e lists the fields");
      return absl::InvalidArgumentError(message);
    }
    format.columns_.push_back({field, width.value_or(field->width)});
  }
  if (format.columns_.empty()) {
    return absl::InvalidArgumentError(
        "no fields given (e.g. --format=JobID,State,ExitCode)");
  }
  return format;
}

std::string SacctFormat::Line(const std::vector<std::string>& values,
                              SacctParsable parsable,
                              std::string_view delimiter, bool header) const {
  std::vector<int> widths;
  for (const Column& column : columns_) widths.push_back(column.width);
  return PrintFieldsLine(values, widths, parsable, delimiter, header);
}

std::string PrintFieldsLine(const std::vector<std::string>& values,
                            const std::vector<int>& widths,
                            SacctParsable parsable, std::string_view delimiter,
                            bool header) {
  std::string line;
  for (size_t i = 0; i < values.size(); ++i) {
    switch (parsable) {
      case SacctParsable::kNo:
        AppendFixed(line, values[i], i < widths.size() ? widths[i] : 10,
                    !header);
        break;
      case SacctParsable::kTrailing:
        absl::StrAppend(&line, values[i], AsAbsl(delimiter));
        break;
      case SacctParsable::kNoEnding:
        absl::StrAppend(&line, values[i],
                        AsAbsl(i + 1 < values.size() ? delimiter : ""));
        break;
    }
  }
  line += "\n";
  return line;
}

std::string PrintFieldsUnderline(const std::vector<int>& widths) {
  std::string underline;
  for (int width : widths) {
    absl::StrAppend(&underline,
                    std::string(static_cast<size_t>(std::abs(width)), '-'),
                    " ");
  }
  return underline + "\n";
}

std::string PrintFieldsHeader(const std::vector<std::string>& names,
                              const std::vector<int>& widths,
                              SacctParsable parsable) {
  std::string header = PrintFieldsLine(names, widths, parsable, "|", true);
  if (parsable == SacctParsable::kNo) header += PrintFieldsUnderline(widths);
  return header;
}

SacctParsable ParsableFrom(bool parsable, bool parsable2) {
  return parsable2  ? SacctParsable::kNoEnding
         : parsable ? SacctParsable::kTrailing
                    : SacctParsable::kNo;
}

std::string SacctFormat::Header(SacctParsable parsable,
                                std::string_view delimiter) const {
  std::string header = Line(Names(), parsable, delimiter, true);
  if (parsable != SacctParsable::kNo) return header;
  std::vector<int> widths;
  for (const Column& column : columns_) widths.push_back(column.width);
  return header + PrintFieldsUnderline(widths);
}

std::string SacctFormat::Row(const SacctRow& row, const SacctContext& context,
                             SacctParsable parsable,
                             std::string_view delimiter) const {
  std::vector<std::string> values;
  values.reserve(columns_.size());
  for (const Column& column : columns_) {
    values.push_back(column.field->value(row, context));
  }
  return Line(values, parsable, delimiter, false);
}

std::vector<std::string> SacctFormat::Names() const {
  std::vector<std::string> names;
  for (const Column& column : columns_) names.push_back(column.field->name);
  return names;
}

std::string SacctHelpFormat() {
  std::string text;
  int in_line = 0;
  for (const SacctField& field : SacctFields()) {
    std::string name(field.name);
    name.resize(std::max<size_t>(name.size(), 20), ' ');
    text += name;
    if (++in_line == 4) {
      while (!text.empty() && text.back() == ' ') text.pop_back();
      text += "\n";
      in_line = 0;
    }
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (in_line != 0) text += "\n";
  return text;
}

}  // namespace gantry::cli
