// What reaches a terminal from user-supplied text: the check gantryd applies
// before storing it and the escaping the CLI applies when printing it.

#include "common/terminal_text.h"

#include <catch2/catch.hpp>
#include <string>

namespace gantry {
namespace terminal_text_test {

using namespace std::string_literals;

TEST_CASE("EscapeForTerminal makes control characters visible") {
  struct Case {
    std::string text;
    std::string printed;
  };
  const Case cases[] = {
      {"train-llama", "train-llama"},
      {"", ""},
      {"r\xc3\xa9sum\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
       "r\xc3\xa9sum\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac"},  // UTF-8 letters pass
      {"a\\b", "a\\b"},                                   // backslash as is
      {"\x1b]0;owned\x07", "\\x1b]0;owned\\x07"},         // window title
      {"\x1b[2J", "\\x1b[2J"},                            // clear screen
      {"x\n 42 root fake RUNNING", "x\\n 42 root fake RUNNING"},
      {"a\rb\tc", "a\\rb\\tc"},
      {"nul\0here"s, "nul\\x00here"},
      {"del\x7f", "del\\x7f"},
      {"c1 \xc2\x9b"
       "2J",
       "c1 \\u009b2J"},                    // CSI as a C1 character
      {"bad \xff\xfe", "bad \\xff\\xfe"},  // not UTF-8
      {"overlong \xc0\xaf", "overlong \\xc0\\xaf"},
      {"surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80"},
      {"cut \xe6\x97", "cut \\xe6\\x97"},  // truncated sequence
  };
  for (const Case& c : cases) {
    INFO(c.printed);
    CHECK(EscapeForTerminal(c.text) == c.printed);
  }
}

TEST_CASE("Escaped text has no byte a terminal acts on") {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte.push_back(static_cast<char>(b));
  const std::string escaped = EscapeForTerminal(every_byte);
  for (unsigned char c : escaped) {
    CHECK((c >= 0x20 && c < 0x7f));  // lone high bytes are not UTF-8
  }
}

TEST_CASE("CheckDisplayText refuses control characters, naming the field") {
  struct Case {
    std::string value;
    bool ok;
    std::string message_part;
  };
  const Case cases[] = {
      {"train-llama", true, ""},
      {"", true, ""},
      {"r\xc3\xa9sum\xc3\xa9", true, ""},
      {"\x1b]0;owned\x07", false, "control character \\x1b at offset 0"},
      {"\x1b[2J", false, "\\x1b"},
      {"line\nbreak", false, "\\n at offset 4"},
      {"tab\there", false, "\\t"},
      {"nul\0"s, false, "\\x00 at offset 3"},
      {"del\x7f", false, "\\x7f"},
      {"c1\xc2\x9b", false, "\\u009b"},
      {"bad\xff", false, "not valid UTF-8 (byte \\xff at offset 3)"},
      {std::string(16, 'x'), true, ""},
      {std::string(17, 'x'), false, "17 bytes long; the limit is 16"},
  };
  for (const Case& c : cases) {
    INFO(EscapeForTerminal(c.value));
    absl::Status status = CheckDisplayText("name (--job-name)", c.value, 16);
    CHECK(status.ok() == c.ok);
    if (!c.ok) {
      CHECK(status.code() == absl::StatusCode::kInvalidArgument);
      CHECK_THAT(std::string(status.message()),
                 Catch::Contains("name (--job-name)") &&
                     Catch::Contains(c.message_part));
    }
  }
}

TEST_CASE("Bidirectional formatting characters are refused and escaped") {
  // U+202E RIGHT-TO-LEFT OVERRIDE would print "job.sh" for "hs.boj".
  const std::string override_name =
      "\xe2\x80\xae"
      "hs.boj";
  CHECK(EscapeForTerminal(override_name) == "\\u202ehs.boj");
  absl::Status refused = CheckDisplayText("name", override_name, 100);
  CHECK(refused.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(refused.message()),
             Catch::Contains("bidirectional formatting character \\u202e"));
  // Every embedding, override, isolate and mark, and the line and paragraph
  // separators.
  for (const char* bidi :
       {"\xd8\x9c", "\xe2\x80\x8e", "\xe2\x80\x8f", "\xe2\x80\xa8",
        "\xe2\x80\xa9", "\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac",
        "\xe2\x80\xad", "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8",
        "\xe2\x81\xa9"}) {
    INFO(EscapeForTerminal(bidi));
    CHECK_FALSE(CheckDisplayText("name", bidi, 100).ok());
    CHECK(EscapeForTerminal(bidi).rfind("\\u", 0) == 0);
  }
  // Right-to-left letters themselves are text, not formatting.
  CHECK(CheckDisplayText("name", "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d", 100).ok());
}

TEST_CASE("CheckDisplayText lets multi-line text keep its lines") {
  CHECK(CheckDisplayText("file", "a b\nc\td\r\n", 100, LineBreaks::kAllowed)
            .ok());
  CHECK_FALSE(
      CheckDisplayText("file", "a\x1b[2Jb\n", 100, LineBreaks::kAllowed).ok());
}

TEST_CASE("ReplaceInvalidUtf8 keeps control characters for JSON to escape") {
  CHECK(ReplaceInvalidUtf8("a\x1b\n\xc3\xa9") == "a\x1b\n\xc3\xa9");
  CHECK(ReplaceInvalidUtf8("a\xff") == "a\xef\xbf\xbd");
}

}  // namespace terminal_text_test
}  // namespace gantry
