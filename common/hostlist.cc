#include "common/hostlist.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"

namespace gantry {
namespace {

// Range bounds (and numeric suffixes in CompressHostlist) are limited to 18
// digits so that `hi - lo + 1` and `value + 1` can never overflow uint64_t.
// A longer digit run in a name is simply not treated as a number.
constexpr std::size_t kMaxNumberDigits = 18;

// Linux allows 64 characters (HOST_NAME_MAX) and DNS 253; the bound keeps
// a long literal times a large range from exhausting memory.
constexpr std::size_t kMaxHostNameChars = 255;

// Error messages quote the expression; a pathological one (megabytes of
// input) must not turn into a megabyte-long log line.
constexpr std::size_t kMaxQuotedChars = 120;

absl::Status Invalid(std::string_view expression, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid hostlist ", QuoteForMessage(expression, kMaxQuotedChars), ": ",
      AsAbsl(problem)));
}

// Caller guarantees 1..kMaxNumberDigits digits, so this cannot overflow.
uint64_t DigitsValue(std::string_view digits) {
  uint64_t value = 0;
  for (char c : digits) value = value * 10 + static_cast<uint64_t>(c - '0');
  return value;
}

std::string Pad(uint64_t value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// Slurm semantics: the zero-padding width of a range is the length of its
// low bound as written, so "[01-10]" pads to 2 and "[8-12]" does not pad.
struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  std::size_t width = 0;
};

// An item ("rack[1-2]-node[01-03]") is a sequence of pieces: literal text
// (no ranges) or one bracket group (one or more ranges).
struct Piece {
  std::string literal;
  std::vector<Range> ranges;
};

struct Item {
  std::vector<Piece> pieces;
  uint64_t count = 1;  // number of names it expands to, <= max_hosts
  std::size_t longest_name = 0;
};

// Adds or multiplies, failing (returning false) once the result would pass
// `limit`; the expansion size is known before anything is allocated.
bool AddWithin(uint64_t a, uint64_t b, uint64_t limit, uint64_t& sum) {
  if (a > limit || b > limit - a) return false;
  sum = a + b;
  return true;
}

bool MultiplyWithin(uint64_t a, uint64_t b, uint64_t limit, uint64_t& product) {
  if (b != 0 && a > limit / b) return false;
  product = a * b;
  return true;
}

absl::Status TooMany(std::string_view expression, uint64_t limit) {
  return Invalid(expression,
                 absl::StrCat("expands to more than ", limit, " hosts"));
}

absl::Status OutOfMemory(std::string_view expression, uint64_t count) {
  return absl::ResourceExhaustedError(
      absl::StrCat("hostlist ", QuoteForMessage(expression, kMaxQuotedChars),
                   " expands to ", count, " hosts, more than memory allows"));
}

absl::Status ParseRange(std::string_view expression, std::string_view spec,
                        Range& range) {
  if (spec.empty()) return Invalid(expression, "empty range in brackets");
  const std::size_t dash = spec.find('-');
  const std::string_view lo_text = spec.substr(0, dash);
  const std::string_view hi_text =
      dash == std::string_view::npos ? lo_text : spec.substr(dash + 1);
  for (std::string_view bound : {lo_text, hi_text}) {
    if (bound.empty()) {
      return Invalid(
          expression,
          absl::StrCat("range ", QuoteForMessage(spec, kMaxQuotedChars),
                       " is missing a bound"));
    }
    if (!IsDigits(bound)) {
      return Invalid(
          expression,
          absl::StrCat("range bound ", QuoteForMessage(bound, kMaxQuotedChars),
                       " is not a number"));
    }
    if (bound.size() > kMaxNumberDigits) {
      return Invalid(
          expression,
          absl::StrCat("range bound ", QuoteForMessage(bound, kMaxQuotedChars),
                       " has more than ", kMaxNumberDigits, " digits"));
    }
  }
  range.lo = DigitsValue(lo_text);
  range.hi = DigitsValue(hi_text);
  range.width = lo_text.size();
  if (range.hi < range.lo) {
    return Invalid(
        expression,
        absl::StrCat("range ", QuoteForMessage(spec, kMaxQuotedChars),
                     " ends before it starts"));
  }
  return absl::OkStatus();
}

// Parses one comma-free-at-top-level item whose brackets are known to be
// balanced and unnested. `limit` bounds the item's expansion size.
absl::Status ParseItem(std::string_view expression, std::string_view text,
                       uint64_t limit, Item& item) {
  item = Item{};
  std::size_t pos = 0;
  while (pos < text.size()) {
    Piece piece;
    if (text[pos] == '[') {
      const std::size_t close = text.find(']', pos);
      const std::string_view body = text.substr(pos + 1, close - pos - 1);
      pos = close + 1;
      uint64_t piece_count = 0;
      std::size_t widest = 0;
      std::size_t start = 0;
      while (true) {
        const std::size_t comma = body.find(',', start);
        Range range;
        absl::Status status =
            ParseRange(expression, body.substr(start, comma - start), range);
        if (!status.ok()) return status;
        if (!AddWithin(piece_count, range.hi - range.lo + 1, limit,
                       piece_count)) {
          return TooMany(expression, limit);
        }
        widest =
            std::max({widest, range.width, std::to_string(range.hi).size()});
        piece.ranges.push_back(range);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      if (!MultiplyWithin(item.count, piece_count, limit, item.count)) {
        return TooMany(expression, limit);
      }
      item.longest_name += widest;
    } else {
      const std::size_t open = text.find('[', pos);
      piece.literal = std::string(text.substr(pos, open - pos));
      pos = open == std::string_view::npos ? text.size() : open;
      item.longest_name += piece.literal.size();
      for (char c : piece.literal) {
        const auto u = static_cast<unsigned char>(c);
        if (absl::ascii_isspace(u) || absl::ascii_iscntrl(u)) {
          return Invalid(
              expression,
              absl::StrCat("host name ", QuoteForMessage(text, kMaxQuotedChars),
                           " contains whitespace or a control "
                           "character"));
        }
      }
    }
    item.pieces.push_back(std::move(piece));
  }
  if (item.longest_name > kMaxHostNameChars) {
    return Invalid(
        expression,
        absl::StrCat("host name ", QuoteForMessage(text, kMaxQuotedChars),
                     " would be longer than ", kMaxHostNameChars,
                     " characters"));
  }
  return absl::OkStatus();
}

// Appends the cross product of the item's pieces, leftmost piece varying
// slowest (the order Slurm uses).
void ExpandItem(const Item& item, std::vector<std::string>& out) {
  std::vector<std::string> names = {""};
  for (const Piece& piece : item.pieces) {
    if (piece.ranges.empty()) {
      for (std::string& name : names) name += piece.literal;
      continue;
    }
    std::vector<std::string> next;
    for (const std::string& name : names) {
      for (const Range& range : piece.ranges) {
        for (uint64_t v = range.lo;; ++v) {
          next.push_back(name + Pad(v, range.width));
          if (v == range.hi) break;
        }
      }
    }
    names = std::move(next);
  }
  for (std::string& name : names) out.push_back(std::move(name));
}

// A host name split into prefix and numeric suffix ("node007" -> "node",
// "007"). `digits` is empty when the name has no usable numeric suffix.
struct SplitName {
  std::string_view prefix;
  std::string_view digits;
};

SplitName SplitNumericSuffix(std::string_view name) {
  std::size_t start = name.size();
  while (start > 0 &&
         absl::ascii_isdigit(static_cast<unsigned char>(name[start - 1]))) {
    --start;
  }
  const std::size_t length = name.size() - start;
  if (length == 0 || length > kMaxNumberDigits) return {name, {}};
  return {name.substr(0, start), name.substr(start)};
}

struct NumberedName {
  uint64_t value;
  std::string digits;
  bool operator<(const NumberedName& other) const {
    if (value != other.value) return value < other.value;
    if (digits.size() != other.digits.size()) {
      return digits.size() < other.digits.size();
    }
    return digits < other.digits;
  }
  bool operator==(const NumberedName& other) const {
    return value == other.value && digits == other.digits;
  }
};

// Merges the sorted, unique suffixes of one prefix into ranges. A range's
// width is the length of its low bound (as Expand reads it), and a suffix
// may join a range only if padding its value to that width gives back
// exactly its digits: "9","10" merge ("[9-10]"), "09","10" merge
// ("[09-10]"), but "009","10" do not.
std::vector<Range> MergeIntoRanges(const std::vector<NumberedName>& numbers) {
  std::vector<Range> ranges;
  // (next value a range would accept, its width) -> index in `ranges`.
  std::map<std::pair<uint64_t, std::size_t>, std::size_t> open;
  for (const NumberedName& number : numbers) {
    const bool zero_padded =
        number.digits.size() > 1 && number.digits[0] == '0';
    // Padded digits fit only their own width; unpadded ones fit any width up
    // to their length. Prefer the widest, which is deterministic.
    const std::size_t min_width = zero_padded ? number.digits.size() : 1;
    bool merged = false;
    for (std::size_t width = number.digits.size(); width >= min_width;
         --width) {
      auto it = open.find({number.value, width});
      if (it == open.end()) continue;
      const std::size_t index = it->second;
      open.erase(it);
      ranges[index].hi = number.value;
      open[{number.value + 1, width}] = index;
      merged = true;
      break;
    }
    if (merged) continue;
    ranges.push_back({number.value, number.value, number.digits.size()});
    open[{number.value + 1, number.digits.size()}] = ranges.size() - 1;
  }
  return ranges;
}

std::string FormatRange(const Range& range) {
  if (range.lo == range.hi) return Pad(range.lo, range.width);
  return absl::StrCat(Pad(range.lo, range.width), "-",
                      Pad(range.hi, range.width));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandHostlist(
    std::string_view expression, std::size_t max_hosts) {
  // Split at top-level commas, checking brackets on the way so that the
  // item parser only ever sees balanced, unnested groups.
  std::vector<std::string_view> item_texts;
  std::size_t item_start = 0;
  bool in_brackets = false;
  for (std::size_t i = 0; i <= expression.size(); ++i) {
    const char c = i < expression.size() ? expression[i] : ',';
    if (c == '[') {
      if (in_brackets) {
        return Invalid(expression, absl::StrCat("nested '[' at position ", i));
      }
      in_brackets = true;
    } else if (c == ']') {
      if (!in_brackets) {
        return Invalid(expression,
                       absl::StrCat("unmatched ']' at position ", i));
      }
      in_brackets = false;
    } else if (c == ',' && !in_brackets) {
      item_texts.push_back(expression.substr(item_start, i - item_start));
      item_start = i + 1;
    }
  }
  if (in_brackets) return Invalid(expression, "unterminated '['");

  // An expression of only whitespace names no hosts; this is not an error,
  // but an empty item between commas is (it is almost always a typo).
  if (item_texts.size() == 1 && Trim(item_texts[0]).empty()) {
    return std::vector<std::string>{};
  }

  const uint64_t limit = max_hosts;
  std::vector<Item> items(item_texts.size());
  uint64_t total = 0;
  for (std::size_t i = 0; i < item_texts.size(); ++i) {
    const std::string_view text = Trim(item_texts[i]);
    if (text.empty()) {
      return Invalid(expression, absl::StrCat("empty item (item ", i + 1, ")"));
    }
    absl::Status status = ParseItem(expression, text, limit, items[i]);
    if (!status.ok()) return status;
    if (!AddWithin(total, items[i].count, limit, total)) {
      return TooMany(expression, limit);
    }
  }

  // max_hosts is the real guard; this only keeps a caller that passed a
  // huge one from getting an exception instead of a status.
  std::vector<std::string> hosts;
  try {
    hosts.reserve(static_cast<std::size_t>(total));
    for (const Item& item : items) ExpandItem(item, hosts);
  } catch (const std::bad_alloc&) {
    return OutOfMemory(expression, total);
  } catch (const std::length_error&) {
    return OutOfMemory(expression, total);
  }
  return hosts;
}

std::string CompressHostlist(const std::vector<std::string>& hosts) {
  // A prefix group: names sharing a prefix and having a numeric suffix, or a
  // single name without one (those are kept apart: "node" and "node[1-2]").
  struct Group {
    std::string prefix;
    bool numbered = false;
    std::vector<NumberedName> numbers;
  };
  std::vector<Group> groups;
  std::map<std::pair<std::string, bool>, std::size_t> index_of;

  for (const std::string& host : hosts) {
    if (host.empty()) continue;  // nothing to write for it
    const SplitName split = SplitNumericSuffix(host);
    const bool numbered = !split.digits.empty();
    const std::string prefix(numbered ? split.prefix : std::string_view(host));
    auto [it, inserted] =
        index_of.try_emplace({prefix, numbered}, groups.size());
    if (inserted) groups.push_back({prefix, numbered, {}});
    if (numbered) {
      groups[it->second].numbers.push_back(
          {DigitsValue(split.digits), std::string(split.digits)});
    }
  }

  std::vector<std::string> parts;
  parts.reserve(groups.size());
  for (Group& group : groups) {
    if (!group.numbered) {
      parts.push_back(group.prefix);
      continue;
    }
    std::sort(group.numbers.begin(), group.numbers.end());
    group.numbers.erase(std::unique(group.numbers.begin(), group.numbers.end()),
                        group.numbers.end());
    const std::vector<Range> ranges = MergeIntoRanges(group.numbers);
    if (ranges.size() == 1 && ranges[0].lo == ranges[0].hi) {
      parts.push_back(group.prefix + FormatRange(ranges[0]));
      continue;
    }
    std::vector<std::string> formatted;
    formatted.reserve(ranges.size());
    for (const Range& range : ranges) formatted.push_back(FormatRange(range));
    parts.push_back(
        absl::StrCat(group.prefix, "[", absl::StrJoin(formatted, ","), "]"));
  }
  return absl::StrJoin(parts, ",");
}

}  // namespace gantry
