// The directive block of a batch script, read into words (see
// directive_lexer.h).

#include "common/directive_lexer.h"

#include <optional>
#include <utility>

#include "common/split_view.h"
#include "common/text.h"

namespace gantry {
namespace {

// Splits a directive's text into words with shell-like quoting: '...' is
// literal, "..." honours \" \\ \$ \` escapes, a backslash outside quotes
// escapes the next character, and a word starting with '#' starts a comment.
// On an unterminated quote, returns the quote character.
std::optional<char> SplitDirectiveWords(std::string_view text,
                                        std::vector<std::string>& words) {
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else if (c == '\'') {
      const std::size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) return '\'';
      word.append(text.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() &&
            std::string_view("\"\\$`").find(text[j + 1]) !=
                std::string_view::npos) {
          ++j;
        }
        word.push_back(text[j]);
      }
      if (j >= text.size()) return '"';
      in_word = true;
      i = j;
    } else if (c == '\\' && i + 1 < text.size()) {
      word.push_back(text[++i]);
      in_word = true;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return std::nullopt;
}

std::string_view DirectiveKeyword(std::string_view line) {
  for (std::string_view keyword : {"#SBATCH", "#GANTRY"}) {
    if (line.starts_with(keyword) &&
        (line.size() == keyword.size() || line[keyword.size()] == ' ' ||
         line[keyword.size()] == '\t')) {
      return keyword;
    }
  }
  return {};
}

}  // namespace

absl::StatusOr<std::vector<DirectiveLine>> ExtractDirectiveLines(
    std::string_view script) {
  std::vector<DirectiveLine> lines;
  int line_number = 0;
  for (std::string_view line : SplitView(script, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_number == 1 && line.starts_with("#!")) continue;
    const std::string_view keyword = DirectiveKeyword(line);
    if (keyword.empty()) {
      // sbatch stops at the first command: directives after it would be
      // read by nobody else, so neither do we.
      const std::string_view stripped = TrimLeft(line);
      if (stripped.empty() || stripped[0] == '#') continue;
      break;
    }
    DirectiveLine directive{line_number, keyword, {}};
    if (std::optional<char> quote =
            SplitDirectiveWords(line.substr(keyword.size()), directive.words)) {
      return absl::InvalidArgumentError(
          Concat(keyword, " line ", line_number, ": unterminated ",
                 std::string(1, *quote), " quote"));
    }
    lines.push_back(std::move(directive));
  }
  return lines;
}

absl::StatusOr<std::vector<std::string>> ExtractDirectiveWords(
    std::string_view script) {
  absl::StatusOr<std::vector<DirectiveLine>> lines =
      ExtractDirectiveLines(script);
  if (!lines.ok()) return lines.status();
  std::vector<std::string> words;
  for (DirectiveLine& line : *lines) {
    for (std::string& word : line.words) words.push_back(std::move(word));
  }
  return words;
}

}  // namespace gantry
