#include "common/hostlist.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/hostlist_ranges.h"
#include "common/text.h"

namespace gantry {
namespace {

using hostlist_internal::DigitsValue;
using hostlist_internal::HostRange;
using hostlist_internal::kMaxNumberDigits;
using hostlist_internal::Pad;

// Slurm refuses a single range of more hosts than this (MAX_RANGE).
constexpr uint64_t kMaxRangeHosts = uint64_t{64} * 1024;

// Linux allows 64 characters (HOST_NAME_MAX) and DNS 253; the bound keeps
// a long literal times a large range from exhausting memory.
constexpr std::size_t kMaxHostNameChars = 255;

// Error messages quote the expression; a pathological one (megabytes of
// input) must not turn into a megabyte-long log line.
constexpr std::size_t kMaxQuotedChars = 120;

bool IsSeparator(char c) { return c == ',' || c == ' ' || c == '\t'; }

absl::Status Invalid(std::string_view expression, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid hostlist ", QuoteForMessage(expression, kMaxQuotedChars), ": ",
      AsAbsl(problem)));
}

std::string Quoted(std::string_view text) {
  return QuoteForMessage(text, kMaxQuotedChars);
}

// Adds or multiplies, failing once the result would pass `limit`; the
// expansion size is known before anything is allocated.
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
      absl::StrCat("hostlist ", Quoted(expression), " expands to ", count,
                   " hosts, more than memory allows"));
}

// A range as written in brackets: "lo", "lo-hi", or "lo-" (lo alone, as
// Slurm reads it). The width is that of `lo` as written.
struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  std::size_t width = 0;
};

absl::Status ParseRange(std::string_view expression, std::string_view spec,
                        Range& range) {
  if (spec.empty()) return Invalid(expression, "empty range in brackets");
  const std::size_t dash = spec.find('-');
  const std::string_view lo_text = spec.substr(0, dash);
  std::string_view hi_text =
      dash == std::string_view::npos ? lo_text : spec.substr(dash + 1);
  if (hi_text.empty()) hi_text = lo_text;
  for (std::string_view bound : {lo_text, hi_text}) {
    if (bound.empty() || !IsDigits(bound)) {
      return Invalid(expression,
                     absl::StrCat("range ", Quoted(spec),
                                  " is not a number or a range lo-hi"));
    }
    if (bound.size() > kMaxNumberDigits) {
      return Invalid(expression, absl::StrCat("range bound ", Quoted(bound),
                                              " has more than ",
                                              kMaxNumberDigits, " digits"));
    }
  }
  range.lo = DigitsValue(lo_text);
  range.hi = DigitsValue(hi_text);
  range.width = lo_text.size();
  if (range.hi < range.lo) {
    return Invalid(expression, absl::StrCat("range ", Quoted(spec),
                                            " ends before it starts"));
  }
  if (range.hi - range.lo + 1 > kMaxRangeHosts) {
    return Invalid(expression,
                   absl::StrCat("range ", Quoted(spec), " has more than ",
                                kMaxRangeHosts, " hosts"));
  }
  return absl::OkStatus();
}

// One bracket group: its ranges in the order written.
struct Group {
  std::vector<Range> ranges;
  uint64_t count = 0;
  std::size_t widest = 0;  // longest number it writes
};

absl::Status ParseGroup(std::string_view expression, std::string_view body,
                        uint64_t limit, Group& group) {
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = body.find(',', start);
    Range range;
    absl::Status status =
        ParseRange(expression, body.substr(start, comma - start), range);
    if (!status.ok()) return status;
    if (!AddWithin(group.count, range.hi - range.lo + 1, limit, group.count)) {
      return TooMany(expression, limit);
    }
    group.widest =
        std::max({group.widest, range.width, std::to_string(range.hi).size()});
    group.ranges.push_back(range);
    if (comma == std::string_view::npos) return absl::OkStatus();
    start = comma + 1;
  }
}

// An item between separators: literal text before each bracket group
// ("rack", "-n" in "rack[1-2]-n[01-04]"), or one literal and no group.
struct Item {
  std::vector<std::string> literals;
  std::vector<Group> groups;
  uint64_t count = 1;
};

absl::Status CheckLiteral(std::string_view expression, std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (absl::ascii_iscntrl(u)) {
      return Invalid(expression, "host names cannot hold control characters");
    }
    if (c == ']') return Invalid(expression, "']' without a '['");
  }
  return absl::OkStatus();
}

absl::Status ParseItem(std::string_view expression, std::string_view text,
                       uint64_t limit, Item& item) {
  std::size_t pos = 0;
  std::size_t longest_name = 0;
  while (pos < text.size()) {
    const std::size_t open = text.find('[', pos);
    const std::string_view literal = text.substr(pos, open - pos);
    absl::Status status = CheckLiteral(expression, literal);
    if (!status.ok()) return status;
    item.literals.emplace_back(literal);
    longest_name += literal.size();
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find(']', open);
    const std::size_t nested = text.find('[', open + 1);
    if (close == std::string_view::npos) {
      return Invalid(expression, "'[' without a ']'");
    }
    if (nested < close) return Invalid(expression, "nested '['");
    Group group;
    status = ParseGroup(expression, text.substr(open + 1, close - open - 1),
                        limit, group);
    if (!status.ok()) return status;
    if (!MultiplyWithin(item.count, group.count, limit, item.count)) {
      return TooMany(expression, limit);
    }
    longest_name += group.widest;
    item.groups.push_back(std::move(group));
    pos = close + 1;
    if (pos < text.size() && text.find('[', pos) == std::string_view::npos) {
      return Invalid(expression,
                     absl::StrCat("text ", Quoted(text.substr(pos)),
                                  " after the last ']' of ", Quoted(text)));
    }
  }
  if (longest_name > kMaxHostNameChars) {
    return Invalid(expression, absl::StrCat("host name ", Quoted(text),
                                            " would be longer than ",
                                            kMaxHostNameChars, " characters"));
  }
  return absl::OkStatus();
}

// Appends the item's ranges in Slurm's order: each value of the groups
// before the last names a prefix (the first group varying fastest, the one
// before last slowest), and the last group's ranges follow that prefix.
void PushItem(const Item& item, std::vector<HostRange>& out) {
  if (item.groups.empty()) {
    hostlist_internal::PushRange(
        out, hostlist_internal::RangeOfName(item.literals[0]));
    return;
  }
  const std::size_t prefix_groups = item.groups.size() - 1;
  // Significance of each prefix group, slowest first.
  std::vector<std::size_t> order;
  for (std::size_t g = prefix_groups; g > 0; --g) order.push_back(g - 1);

  // One position per prefix group: (range index, value).
  std::vector<std::pair<std::size_t, uint64_t>> at(prefix_groups);
  for (std::size_t g = 0; g < prefix_groups; ++g) {
    at[g] = {0, item.groups[g].ranges[0].lo};
  }
  const Group& last = item.groups.back();
  while (true) {
    std::string prefix;
    for (std::size_t g = 0; g < prefix_groups; ++g) {
      const Range& range = item.groups[g].ranges[at[g].first];
      absl::StrAppend(&prefix, item.literals[g],
                      Pad(at[g].second, range.width));
    }
    prefix += item.literals[prefix_groups];
    for (const Range& range : last.ranges) {
      hostlist_internal::PushRange(
          out, HostRange{prefix, range.lo, range.hi, range.width, true});
    }
    // Advance the odometer, fastest digit (end of `order`) first.
    std::size_t k = order.size();
    while (k > 0) {
      const std::size_t g = order[k - 1];
      auto& [index, value] = at[g];
      const std::vector<Range>& ranges = item.groups[g].ranges;
      if (value < ranges[index].hi) {
        ++value;
        break;
      }
      if (index + 1 < ranges.size()) {
        ++index;
        value = ranges[index].lo;
        break;
      }
      at[g] = {0, ranges[0].lo};
      --k;
    }
    if (k == 0) return;
  }
}

absl::StatusOr<std::vector<HostRange>> Parse(std::string_view expression,
                                             std::size_t max_hosts) {
  // Split at separators outside brackets; brackets are checked per item.
  std::vector<std::string_view> texts;
  std::size_t start = 0;
  bool in_brackets = false;
  for (std::size_t i = 0; i <= expression.size(); ++i) {
    const char c = i < expression.size() ? expression[i] : ',';
    if (c == '[') in_brackets = true;
    if (c == ']') in_brackets = false;
    if (in_brackets && i < expression.size()) {
      if (c == ' ' || c == '\t') {
        return Invalid(expression, "whitespace inside brackets");
      }
      continue;
    }
    if (IsSeparator(c)) {
      if (i > start) texts.push_back(expression.substr(start, i - start));
      start = i + 1;
    }
  }

  const uint64_t limit = max_hosts;
  std::vector<Item> items(texts.size());
  uint64_t total = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    absl::Status status = ParseItem(expression, texts[i], limit, items[i]);
    if (!status.ok()) return status;
    if (!AddWithin(total, items[i].count, limit, total)) {
      return TooMany(expression, limit);
    }
  }
  // How many ranges the items push: one per combination of the prefix
  // groups' values and the last group's ranges (never more than the hosts,
  // so the sum cannot overflow).
  uint64_t range_total = 0;
  for (const Item& item : items) {
    if (item.groups.empty()) {
      ++range_total;
      continue;
    }
    const Group& last = item.groups.back();
    range_total += item.count / last.count * last.ranges.size();
  }
  // max_hosts is the real guard; this only keeps a caller that passed a
  // huge one from getting an exception instead of a status. Reserving all
  // of it first makes an impossible size fail at once, instead of after
  // growing the vector through gigabytes.
  std::vector<HostRange> ranges;
  try {
    ranges.reserve(static_cast<std::size_t>(range_total));
    for (const Item& item : items) PushItem(item, ranges);
  } catch (const std::bad_alloc&) {
    return OutOfMemory(expression, total);
  } catch (const std::length_error&) {
    return OutOfMemory(expression, total);
  }
  return ranges;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandHostlist(
    std::string_view expression, std::size_t max_hosts) {
  absl::StatusOr<std::vector<HostRange>> ranges = Parse(expression, max_hosts);
  if (!ranges.ok()) return ranges.status();
  uint64_t total = 0;
  for (const HostRange& range : *ranges) total += range.count();

  std::vector<std::string> hosts;
  try {
    hosts.reserve(static_cast<std::size_t>(total));
    for (const HostRange& range : *ranges) {
      if (!range.numbered) {
        hosts.push_back(range.prefix);
        continue;
      }
      for (uint64_t v = range.lo;; ++v) {
        hosts.push_back(range.prefix + Pad(v, range.width));
        if (v == range.hi) break;
      }
    }
  } catch (const std::bad_alloc&) {
    return OutOfMemory(expression, total);
  } catch (const std::length_error&) {
    return OutOfMemory(expression, total);
  }
  return hosts;
}

absl::StatusOr<std::string> CompressHostlistExpression(
    std::string_view expression, std::size_t max_hosts) {
  absl::StatusOr<std::vector<HostRange>> ranges = Parse(expression, max_hosts);
  if (!ranges.ok()) return ranges.status();
  return hostlist_internal::FormatRanges(*ranges);
}

}  // namespace gantry
