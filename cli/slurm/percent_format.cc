#include "cli/slurm/percent_format.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/terminal_text.h"

namespace gantry::cli {

absl::StatusOr<PercentFormat> PercentFormat::Parse(std::string_view format,
                                                   std::string_view letters) {
  return Parse(format, letters, nullptr);
}

absl::StatusOr<PercentFormat> PercentFormat::Parse(std::string_view format,
                                                   std::string_view letters,
                                                   std::vector<char>* unknown) {
  PercentFormat parsed;
  std::string literal;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      literal += format[i];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      literal += '%';
      ++i;
      continue;
    }
    Item item;
    size_t at = i + 1;
    if (at < format.size() && (format[at] == '.' || format[at] == '-')) {
      item.right = format[at] == '.';
      ++at;
    }
    if (at < format.size() && format[at] == '#') {
      item.fit = true;
      ++at;
    }
    while (at < format.size() &&
           std::isdigit(static_cast<unsigned char>(format[at]))) {
      item.width = item.width * 10 + (format[at] - '0');
      if (item.width > 1000) {
        return absl::InvalidArgumentError(absl::StrCat(
            "field width too large in \"", std::string(format), "\""));
      }
      ++at;
    }
    if (unknown != nullptr && at < format.size() &&
        letters.find(format[at]) == std::string::npos) {
      unknown->push_back(format[at]);
      i = at;
      continue;
    }
    if (at >= format.size() || letters.find(format[at]) == std::string::npos) {
      std::string known;
      for (char letter : letters)
        absl::StrAppend(&known, "%", std::string(1, letter), " ");
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown format field \"", std::string(format.substr(i, at + 1 - i)),
          "\" in \"", std::string(format), "\": known are ", known,
          "(and %% for %)"));
    }
    item.letter = format[at];
    if (!literal.empty()) {
      parsed.items_.push_back(Item{std::move(literal)});
      literal.clear();
    }
    parsed.items_.push_back(item);
    i = at;
  }
  if (!literal.empty()) parsed.items_.push_back(Item{std::move(literal)});
  return parsed;
}

std::string PercentFormat::ExpandAll(std::string_view format,
                                     std::string_view letters) {
  std::string all;
  for (char letter : letters)
    absl::StrAppend(&all, "%", std::string(1, letter), "|");
  std::string expanded;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format.substr(i, 2) == "%%") {
      expanded += "%%";
      ++i;
    } else if (format.substr(i, 4) == "%all") {
      expanded += all;
      i += 3;
    } else {
      expanded += format[i];
    }
  }
  return expanded;
}

void PercentFormat::AddField(char letter, int width, bool right,
                             std::string suffix) {
  Item item;
  item.letter = letter;
  item.width = width;
  item.right = right;
  items_.push_back(item);
  if (!suffix.empty()) items_.push_back(Item{std::move(suffix)});
}

void PercentFormat::FitWidths(const std::vector<std::vector<std::string>>& rows,
                              int minimum) {
  std::size_t field = 0;
  for (Item& item : items_) {
    if (item.letter == 0) continue;
    if (item.fit) {
      std::size_t longest = static_cast<std::size_t>(minimum);
      for (const std::vector<std::string>& row : rows) {
        if (field < row.size()) longest = std::max(longest, row[field].size());
      }
      item.width = static_cast<int>(longest);
    }
    ++field;
  }
}

std::vector<char> PercentFormat::Fields() const {
  std::vector<char> fields;
  for (const Item& item : items_) {
    if (item.letter != 0) fields.push_back(item.letter);
  }
  return fields;
}

std::string PercentFormat::Header(const char* (*header_of)(char)) const {
  std::vector<std::string> names;
  for (char letter : Fields()) names.push_back(header_of(letter));
  return Render(names);
}

std::string PercentFormat::Render(
    const std::vector<std::string>& values) const {
  std::string line;
  size_t next = 0;
  for (const Item& item : items_) {
    if (item.letter == 0) {
      line += item.literal;
      continue;
    }
    // Values are user-supplied text: never let it drive the terminal.
    std::string value =
        next < values.size() ? EscapeForTerminal(values[next]) : "";
    ++next;
    if (item.width > 0) {
      const size_t width = static_cast<size_t>(item.width);
      if (value.size() > width) value.resize(width);
      std::string pad(width - value.size(), ' ');
      value = item.right ? pad + value : value + pad;
    }
    line += value;
  }
  // Left-aligned last columns would leave trailing blanks.
  while (!keep_trailing_blanks_ && !line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  return line + "\n";
}

}  // namespace gantry::cli
