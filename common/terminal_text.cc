#include "common/terminal_text.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry {
namespace {

struct CodePoint {
  uint32_t value = 0;
  size_t length = 0;  // 0: the bytes at this offset are not UTF-8
};

// Decodes the well-formed UTF-8 sequence at `offset` (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF).
CodePoint DecodeAt(std::string_view text, size_t offset) {
  const auto byte = [&](size_t i) {
    return static_cast<uint8_t>(text[offset + i]);
  };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  size_t length;
  uint32_t value;
  uint32_t min_value;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, value = lead & 0x1F, min_value = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, min_value = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, value = lead & 0x07, min_value = 0x10000;
  } else {
    return {};
  }
  if (offset + length > text.size()) return {};
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return {};
    value = (value << 6) | (byte(i) & 0x3F);
  }
  if (value < min_value || value > 0x10FFFF ||
      (value >= 0xD800 && value <= 0xDFFF)) {
    return {};
  }
  return {value, length};
}

bool IsC0OrC1Control(uint32_t code_point) {
  return code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F);
}

// Unicode's bidirectional formatting characters (UAX #9: the embeddings,
// overrides and isolates, and the implicit marks) and the line and
// paragraph separators: invisible, and they reorder or break what follows
// them on the line. U+202E in a job name makes a listing lie about the
// name, the columns after it and even another user's job beside it (the
// "Trojan Source" trick, CVE-2021-42574), so they are treated as control
// characters.
bool IsInvisibleFormatting(uint32_t code_point) {
  return code_point == 0x061C ||                          // ARABIC LETTER MARK
         code_point == 0x200E || code_point == 0x200F ||  // LRM, RLM
         (code_point >= 0x2028 && code_point <= 0x202E) ||  // LS, PS, LRE..RLO
         (code_point >= 0x2066 && code_point <= 0x2069);    // LRI..PDI
}

bool IsControl(uint32_t code_point) {
  return IsC0OrC1Control(code_point) || IsInvisibleFormatting(code_point);
}

bool IsLineBreakOrTab(uint32_t code_point) {
  return code_point == '\n' || code_point == '\r' || code_point == '\t';
}

}  // namespace

absl::Status CheckDisplayText(std::string_view field, std::string_view value,
                              size_t max_bytes, LineBreaks line_breaks) {
  if (value.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(field), " is ", value.size(),
                     " bytes long; the limit is ", max_bytes));
  }
  for (size_t offset = 0; offset < value.size();) {
    const CodePoint code_point = DecodeAt(value, offset);
    if (code_point.length == 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is not valid UTF-8 (byte \\x%02x at offset %d)",
                          field, static_cast<uint8_t>(value[offset]), offset));
    }
    if (IsControl(code_point.value) && !(line_breaks == LineBreaks::kAllowed &&
                                         IsLineBreakOrTab(code_point.value))) {
      const char* kind = IsInvisibleFormatting(code_point.value)
                             ? "the bidirectional formatting character"
                             : "the control character";
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s contains %s %s at offset %d; control and bidirectional "
          "formatting characters are not allowed",
          field, kind,
          EscapeForTerminal(value.substr(offset, code_point.length)), offset));
    }
    offset += code_point.length;
  }
  return absl::OkStatus();
}

std::string EscapeForTerminal(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (size_t offset = 0; offset < text.size();) {
    const CodePoint code_point = DecodeAt(text, offset);
    if (code_point.length == 0) {
      absl::StrAppendFormat(&escaped, "\\x%02x",
                            static_cast<uint8_t>(text[offset]));
      ++offset;
      continue;
    }
    if (!IsControl(code_point.value)) {
      escaped.append(text.substr(offset, code_point.length));
    } else if (code_point.value == '\n') {
      escaped.append("\\n");
    } else if (code_point.value == '\r') {
      escaped.append("\\r");
    } else if (code_point.value == '\t') {
      escaped.append("\\t");
    } else if (code_point.value < 0x80) {
      absl::StrAppendFormat(&escaped, "\\x%02x", code_point.value);
    } else {
      absl::StrAppendFormat(&escaped, "\\u%04x", code_point.value);
    }
    offset += code_point.length;
  }
  return escaped;
}

std::string ReplaceInvalidUtf8(std::string_view text) {
  std::string repaired;
  repaired.reserve(text.size());
  for (size_t offset = 0; offset < text.size();) {
    const CodePoint code_point = DecodeAt(text, offset);
    if (code_point.length == 0) {
      repaired.append("\xef\xbf\xbd");  // U+FFFD REPLACEMENT CHARACTER
      ++offset;
    } else {
      repaired.append(text.substr(offset, code_point.length));
      offset += code_point.length;
    }
  }
  return repaired;
}

}  // namespace gantry
