#include "common/log_format.h"

#include <charconv>
#include <cstdint>

#include "absl/strings/str_format.h"

namespace gantry::log {
namespace {

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarning:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

// sd-daemon.h's SD_ERR, SD_WARNING, SD_INFO and SD_DEBUG, spelled out so
// that the pure core does not include a systemd header.
const char* JournalPriority(Level level) {
  switch (level) {
    case Level::kDebug:
      return "<7>";
    case Level::kInfo:
      return "<6>";
    case Level::kWarning:
      return "<4>";
    case Level::kError:
      return "<3>";
  }
  return "<6>";
}

bool IsControlByte(char c) {
  return static_cast<unsigned char>(c) < 0x20 || c == '\x7f';
}

// Quotes a value when it holds spaces, quotes or '=' so lines stay
// parseable; a newline is escaped, so one event is always one line (the
// journal would otherwise split it into two entries), and so is every other
// control character: values quote what agents and users sent, and an admin
// reading the log on a terminal must not have it run escape sequences.
void AppendValue(std::string& out, std::string_view value) {
  bool needs_quotes = value.empty();
  for (char c : value) {
    if (c == ' ' || c == '"' || c == '=' || IsControlByte(c)) {
      needs_quotes = true;
      break;
    }
  }
  if (!needs_quotes) {
    out.append(value);
    return;
  }
  out.push_back('"');
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out.append("\\n");
    } else if (c == '\t') {
      out.append("\\t");
    } else if (IsControlByte(c)) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(c));
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

bool ParseDecimal(std::string_view text, uint64_t& value) {
  if (text.empty()) return false;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

Sink SinkOf(std::string_view journal_stream, dev_t stderr_dev,
            ino_t stderr_ino) {
  const size_t colon = journal_stream.find(':');
  if (colon == std::string_view::npos) return Sink::kPlain;
  uint64_t dev = 0;
  uint64_t ino = 0;
  if (!ParseDecimal(journal_stream.substr(0, colon), dev) ||
      !ParseDecimal(journal_stream.substr(colon + 1), ino)) {
    return Sink::kPlain;
  }
  return dev == static_cast<uint64_t>(stderr_dev) &&
                 ino == static_cast<uint64_t>(stderr_ino)
             ? Sink::kJournal
             : Sink::kPlain;
}

std::string FormatLine(Sink sink, Level level, std::string_view timestamp,
                       std::string_view component, std::string_view message,
                       std::initializer_list<Field> fields) {
  std::string line;
  line.reserve(128);
  if (sink == Sink::kJournal) {
    line.append(JournalPriority(level));
  } else {
    line.append("ts=").append(timestamp).push_back(' ');
  }
  line.append("level=").append(LevelName(level));
  line.append(" component=").append(component);
  line.append(" msg=");
  AppendValue(line, message);
  for (const Field& field : fields) {
    line.push_back(' ');
    line.append(field.key).push_back('=');
    AppendValue(line, field.value);
  }
  line.push_back('\n');
  return line;
}

}  // namespace gantry::log
