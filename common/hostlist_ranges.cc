#include "common/hostlist_ranges.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/hostlist.h"

namespace gantry {
namespace hostlist_internal {
namespace {

std::size_t DigitCount(uint64_t value) {
  std::size_t digits = 1;
  while (value >= 10) {
    value /= 10;
    ++digits;
  }
  return digits;
}

std::size_t ZerosNeeded(uint64_t value, std::size_t width) {
  const std::size_t digits = DigitCount(value);
  return width > digits ? width - digits : 0;
}

// Slurm's rule for joining numbers written at different widths: the widths
// are compatible when one of the two numbers reads the same at either width;
// the joined range then uses the width that changes neither. `tail_width`
// is updated to that width.
bool CompatibleWidths(uint64_t tail_lo, std::size_t& tail_width, uint64_t lo,
                      std::size_t width) {
  if (tail_width == width) return true;
  const bool tail_changes =
      ZerosNeeded(tail_lo, tail_width) != ZerosNeeded(tail_lo, width);
  const bool other_changes =
      ZerosNeeded(lo, width) != ZerosNeeded(lo, tail_width);
  if (tail_changes && other_changes) return false;
  if (!tail_changes) tail_width = width;
  return true;
}

bool SharesBracket(const HostRange& a, const HostRange& b) {
  return a.numbered && b.numbered && a.prefix == b.prefix;
}

std::string FormatNumbers(const HostRange& range) {
  if (range.lo == range.hi) return Pad(range.lo, range.width);
  return absl::StrCat(Pad(range.lo, range.width), "-",
                      Pad(range.hi, range.width));
}

}  // namespace

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

HostRange RangeOfName(std::string_view name) {
  std::size_t start = name.size();
  while (start > 0 &&
         absl::ascii_isdigit(static_cast<unsigned char>(name[start - 1]))) {
    --start;
  }
  const std::size_t length = name.size() - start;
  if (length == 0 || length > kMaxNumberDigits) {
    return HostRange{std::string(name), 0, 0, 0, false};
  }
  const uint64_t value = DigitsValue(name.substr(start));
  return HostRange{std::string(name.substr(0, start)), value, value, length,
                   true};
}

void PushRange(std::vector<HostRange>& ranges, const HostRange& range) {
  if (!ranges.empty()) {
    HostRange& tail = ranges.back();
    if (tail.numbered && range.numbered && tail.hi + 1 == range.lo &&
        tail.prefix == range.prefix &&
        CompatibleWidths(tail.lo, tail.width, range.lo, range.width)) {
      tail.hi = range.hi;
      return;
    }
  }
  ranges.push_back(range);
}

std::string FormatRanges(const std::vector<HostRange>& ranges) {
  std::string out;
  std::size_t i = 0;
  while (i < ranges.size()) {
    if (!out.empty()) out += ',';
    const bool bracket =
        ranges[i].count() > 1 ||
        (i + 1 < ranges.size() && SharesBracket(ranges[i], ranges[i + 1]));
    out += ranges[i].prefix;
    if (!ranges[i].numbered) {
      ++i;
      continue;
    }
    if (bracket) out += '[';
    const std::size_t first = i;
    do {
      if (i > first) out += ',';
      out += FormatNumbers(ranges[i]);
      ++i;
    } while (i < ranges.size() && SharesBracket(ranges[i], ranges[i - 1]));
    if (bracket) out += ']';
  }
  return out;
}

}  // namespace hostlist_internal

using hostlist_internal::HostRange;

std::string CompressHostlistInOrder(const std::vector<std::string>& hosts) {
  std::vector<HostRange> ranges;
  for (const std::string& host : hosts) {
    if (host.empty()) continue;  // nothing to write for it
    hostlist_internal::PushRange(ranges, hostlist_internal::RangeOfName(host));
  }
  return hostlist_internal::FormatRanges(ranges);
}

std::string CompressHostlist(const std::vector<std::string>& hosts) {
  // One group per prefix (numbered names) or per whole name (names without
  // a number), in the order of first appearance.
  std::vector<std::vector<HostRange>> groups;
  std::map<std::pair<std::string, bool>, std::size_t> index_of;
  for (const std::string& host : hosts) {
    if (host.empty()) continue;
    HostRange range = hostlist_internal::RangeOfName(host);
    auto [it, inserted] =
        index_of.try_emplace({range.prefix, range.numbered}, groups.size());
    if (inserted) groups.emplace_back();
    std::vector<HostRange>& group = groups[it->second];
    if (range.numbered || group.empty()) group.push_back(std::move(range));
  }

  std::vector<HostRange> ranges;
  for (std::vector<HostRange>& group : groups) {
    std::sort(group.begin(), group.end(),
              [](const HostRange& a, const HostRange& b) {
                return std::pair(a.lo, a.width) < std::pair(b.lo, b.width);
              });
    group.erase(std::unique(group.begin(), group.end(),
                            [](const HostRange& a, const HostRange& b) {
                              return a.lo == b.lo && a.width == b.width;
                            }),
                group.end());
    // A number joins an open range if padding it to the range's width (the
    // width of its low bound, as expansion reads it) gives back exactly its
    // digits: "9","10" join ("[9-10]"), "09","10" join ("[09-10]"), but
    // "009","10" do not. Open ranges are keyed by (next number, width).
    std::map<std::pair<uint64_t, std::size_t>, std::size_t> open;
    for (const HostRange& name : group) {
      const std::size_t digits = name.width;
      const bool zero_padded = digits > std::to_string(name.lo).size();
      const std::size_t min_width = zero_padded ? digits : 1;
      bool joined = false;
      for (std::size_t width = digits; width >= min_width; --width) {
        auto it = open.find({name.lo, width});
        if (it == open.end()) continue;
        const std::size_t index = it->second;
        open.erase(it);
        ranges[index].hi = name.lo;
        open[{name.lo + 1, width}] = index;
        joined = true;
        break;
      }
      if (joined || !name.numbered) {
        if (!name.numbered) ranges.push_back(name);
        continue;
      }
      ranges.push_back(name);
      open[{name.lo + 1, digits}] = ranges.size() - 1;
    }
  }
  return hostlist_internal::FormatRanges(ranges);
}

}  // namespace gantry
