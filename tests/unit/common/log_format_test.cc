// Log lines for files and terminals versus for systemd's journal.
#include "common/log_format.h"

#include <catch2/catch.hpp>

namespace gantry::log {
namespace log_format_test {

TEST_CASE("JOURNAL_STREAM must name stderr itself", "[log]") {
  CHECK(SinkOf("64769:123456", 64769, 123456) == Sink::kJournal);
  // Inherited by a child whose stderr went elsewhere: another inode.
  CHECK(SinkOf("64769:123456", 64769, 999) == Sink::kPlain);
  CHECK(SinkOf("64769:123456", 1, 123456) == Sink::kPlain);
  CHECK(SinkOf("", 0, 0) == Sink::kPlain);
  CHECK(SinkOf("64769", 64769, 0) == Sink::kPlain);
  CHECK(SinkOf("64769:", 64769, 0) == Sink::kPlain);
  CHECK(SinkOf(":0", 0, 0) == Sink::kPlain);
  CHECK(SinkOf("x:1", 0, 1) == Sink::kPlain);
  CHECK(SinkOf("1:2 ", 1, 2) == Sink::kPlain);
}

TEST_CASE("plain lines carry a timestamp", "[log]") {
  CHECK(FormatLine(Sink::kPlain, Level::kInfo, "2024-01-02T03:04:05.006Z",
                   "gantryd", "job started", {{"job", 12}, {"nodes", "a b"}}) ==
        "ts=2024-01-02T03:04:05.006Z level=info component=gantryd "
        "msg=\"job started\" job=12 nodes=\"a b\"\n");
}

TEST_CASE("journal lines carry the syslog priority instead", "[log]") {
  auto line = [](Level level) {
    return FormatLine(Sink::kJournal, level, "2024-01-02T03:04:05.006Z",
                      "gantry-agent", "m", {});
  };
  CHECK(line(Level::kError) == "<3>level=error component=gantry-agent msg=m\n");
  CHECK(line(Level::kWarning) ==
        "<4>level=warn component=gantry-agent msg=m\n");
  CHECK(line(Level::kInfo) == "<6>level=info component=gantry-agent msg=m\n");
  CHECK(line(Level::kDebug) == "<7>level=debug component=gantry-agent msg=m\n");
}

TEST_CASE("an event stays one line", "[log]") {
  CHECK(FormatLine(Sink::kJournal, Level::kError, "", "gantryd", "two\nlines",
                   {{"quote", "say \"hi\""}}) ==
        "<3>level=error component=gantryd msg=\"two\\nlines\" "
        "quote=\"say \\\"hi\\\"\"\n");
}

TEST_CASE("control characters in values never reach a terminal raw", "[log]") {
  CHECK(FormatLine(Sink::kPlain, Level::kWarning, "t", "gantryd", "m",
                   {{"name", "\x1b]0;owned\x07"}, {"detail", "a\tb\rc\x7f"}}) ==
        "ts=t level=warn component=gantryd msg=m "
        "name=\"\\x1b]0;owned\\x07\" detail=\"a\\tb\\x0dc\\x7f\"\n");
}

}  // namespace log_format_test
}  // namespace gantry::log
