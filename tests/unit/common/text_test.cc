// The text helpers the parsers of user input share: what counts as white
// space and as digits, and how values are quoted in error messages (the
// messages users see, so their form must not drift).

#include "common/text.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace gantry {
namespace text_test {

using namespace std::string_literals;

TEST_CASE("IsLowerHex takes lowercase hex digits only", "[text]") {
  CHECK(IsLowerHex("0123456789abcdef"));
  CHECK(IsLowerHex(""));
  CHECK_FALSE(IsLowerHex("ABCDEF"));
  CHECK_FALSE(IsLowerHex("e306928g"));
  CHECK_FALSE(IsLowerHex("ab cd"));
  CHECK_FALSE(IsLowerHex("crc32c:e3069283"));
}

TEST_CASE("Trim drops ASCII white space at both ends only", "[text]") {
  CHECK(Trim("  node01 \t") == "node01");
  CHECK(Trim(" \t\n\v\f\r") == "");
  CHECK(Trim("") == "");
  CHECK(Trim("a b") == "a b");
  CHECK(Trim("\n a \n") == "a");
  // NUL and non-ASCII bytes are not white space.
  CHECK(Trim("\0a\0"s) == "\0a\0"s);
  CHECK(Trim("\xa0x\xa0") == "\xa0x\xa0");
}

TEST_CASE("Trim returns a view into its argument", "[text]") {
  const std::string_view text = "  abc  ";
  const std::string_view trimmed = Trim(text);
  CHECK(trimmed.data() == text.data() + 2);
  CHECK(trimmed.size() == 3);
}

TEST_CASE("TrimLeft keeps trailing white space", "[text]") {
  CHECK(TrimLeft(" \t#SBATCH -N 2 ") == "#SBATCH -N 2 ");
  CHECK(TrimLeft("   ") == "");
  CHECK(TrimLeft("") == "");
  CHECK(TrimLeft("x ") == "x ");
}

TEST_CASE("TrimChars trims only the characters given", "[text]") {
  CHECK(TrimChars(" \t5\r\n", " \t\r\n") == "5");
  CHECK(TrimChars("\v5\f", " \t\r\n") == "\v5\f");
  CHECK(TrimChars("xxaxx", "x") == "a");
  CHECK(TrimChars("xxx", "x") == "");
  CHECK(TrimChars("", "x") == "");
  CHECK(TrimChars("abc", "") == "abc");
}

TEST_CASE("IsDigits wants one or more ASCII digits", "[text]") {
  CHECK(IsDigits("0"));
  CHECK(IsDigits("0123456789"));
  CHECK(IsDigits("99999999999999999999999999"));  // no range check
  CHECK_FALSE(IsDigits(""));
  CHECK_FALSE(IsDigits("-1"));
  CHECK_FALSE(IsDigits("+1"));
  CHECK_FALSE(IsDigits(" 1"));
  CHECK_FALSE(IsDigits("1 "));
  CHECK_FALSE(IsDigits("1a"));
  CHECK_FALSE(IsDigits("1.5"));
  CHECK_FALSE(IsDigits("\xd9\xa3"));  // ARABIC-INDIC DIGIT THREE
}

TEST_CASE("EqualsIgnoreCase folds ASCII letters only", "[text]") {
  CHECK(EqualsIgnoreCase("UNLIMITED", "unlimited"));
  CHECK(EqualsIgnoreCase("InFiNiTe", "INFINITE"));
  CHECK(EqualsIgnoreCase("", ""));
  CHECK_FALSE(EqualsIgnoreCase("UNLIMITED", "UNLIMITE"));
  CHECK_FALSE(EqualsIgnoreCase("a", "b"));
  CHECK_FALSE(EqualsIgnoreCase("\xc3\x89", "\xc3\xa9"));  // É, é
}

TEST_CASE("QuoteForMessage escapes and cuts the value", "[text]") {
  struct Case {
    std::string text;
    std::size_t max_chars;
    std::string quoted;
  };
  const Case cases[] = {
      {"node[01-04]", 80, "\"node[01-04]\""},
      {"", 80, "\"\""},
      {"a\"b", 80, "\"a\\\"b\""},
      {"a'b", 80, "\"a\\'b\""},
      {"a\\b", 80, "\"a\\\\b\""},
      {"line\nnext\ttab\rret", 80, "\"line\\nnext\\ttab\\rret\""},
      {"esc\x1b[2J", 80, "\"esc\\x1b[2J\""},
      {"nul\0"s, 80, "\"nul\\x00\""},
      {"\xc3\xa9t\xc3\xa9", 80, "\"\\xc3\\xa9t\\xc3\\xa9\""},
      {"abcdef", 6, "\"abcdef\""},
      {"abcdefg", 6, "\"abcdef...\""},
      // Cut before escaping: the limit counts characters of the value.
      {"\n\n\n\n", 3, "\"\\n\\n\\n...\""},
      {"abc", 0, "\"...\""},
  };
  for (const Case& c : cases) {
    INFO(c.quoted);
    CHECK(QuoteForMessage(c.text, c.max_chars) == c.quoted);
    CHECK(EscapeForMessage(c.text, c.max_chars) ==
          c.quoted.substr(1, c.quoted.size() - 2));
  }
}

TEST_CASE("Concat joins views, strings, characters and numbers", "[text]") {
  const std::string_view view = "view";
  const std::string text = "text";
  const absl::string_view absl_view = "absl";
  CHECK(Concat(view, "-", text, '-', absl_view, ":", 42, ",", uint64_t{7}, ",",
               -3) == "view-text-absl:42,7,-3");
  CHECK(Concat() == "");
}

TEST_CASE("StatusMessage and the string_view bridges", "[text]") {
  CHECK(StatusMessage(absl::InvalidArgumentError("bad")) == "bad");
  CHECK(StatusMessage(absl::OkStatus()) == "");
  const std::string text = "abc";
  CHECK(AsAbsl(text).data() == text.data());
  CHECK(AsStd(AsAbsl(text)) == "abc");
}

}  // namespace text_test
}  // namespace gantry
