#include "common/hostlist_ranged.h"

#include <cstdint>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry {
namespace {

// As Slurm: at most this many trailing digits make a host's number.
constexpr std::size_t kMaxDigits = 18;

// A run of hosts: PREFIX plus LO..HI printed WIDTH digits wide (zero
// padded), or a name with no number (`numeric` false).
struct Range {
  std::string prefix;
  bool numeric = false;
  uint64_t lo = 0, hi = 0;
  int width = 0;
};

Range Split(const std::string& host) {
  std::size_t digits = 0;
  while (digits < host.size() && digits < kMaxDigits &&
         host[host.size() - 1 - digits] >= '0' &&
         host[host.size() - 1 - digits] <= '9') {
    ++digits;
  }
  Range range;
  if (digits == 0) {
    range.prefix = host;
    return range;
  }
  range.prefix = host.substr(0, host.size() - digits);
  range.numeric = true;
  for (char c : std::string_view(host).substr(host.size() - digits)) {
    range.lo = range.lo * 10 + static_cast<uint64_t>(c - '0');
  }
  range.hi = range.lo;
  range.width = static_cast<int>(digits);
  return range;
}

int Digits(uint64_t value) {
  int digits = 1;
  while (value >= 10) {
    value /= 10;
    ++digits;
  }
  return digits;
}

// Whether `value` written `width` wide has leading zeros.
bool Padded(uint64_t value, int width) { return width > Digits(value); }

// Slurm's width equivalence: the same width, or neither zero padded
// ("n9" and "n10" join; "n09" and "n1" do not).
bool SameWidth(const Range& range, const Range& host) {
  return range.width == host.width ||
         (!Padded(range.lo, range.width) && !Padded(host.lo, host.width));
}

std::string Number(uint64_t value, int width) {
  return absl::StrFormat("%0*d", width, value);
}

std::string Bounds(const Range& range) {
  if (range.lo == range.hi) return Number(range.lo, range.width);
  return absl::StrCat(Number(range.lo, range.width), "-",
                      Number(range.hi, range.width));
}

}  // namespace

std::string RangedHostlist(const std::vector<std::string>& hosts) {
  std::vector<Range> ranges;
  for (const std::string& host : hosts) {
    Range next = Split(host);
    if (!ranges.empty()) {
      Range& last = ranges.back();
      if (next.numeric && last.numeric && last.prefix == next.prefix &&
          last.hi != UINT64_MAX && next.lo == last.hi + 1 &&
          SameWidth(last, next)) {
        last.hi = next.lo;
        continue;
      }
    }
    ranges.push_back(std::move(next));
  }
  std::string out;
  for (std::size_t i = 0; i < ranges.size();) {
    if (!out.empty()) out += ',';
    const Range& first = ranges[i];
    if (!first.numeric) {
      out += first.prefix;
      ++i;
      continue;
    }
    // Neighbours with the same prefix share one pair of brackets.
    std::size_t j = i + 1;
    while (j < ranges.size() && ranges[j].numeric &&
           ranges[j].prefix == first.prefix) {
      ++j;
    }
    if (j == i + 1 && first.lo == first.hi) {
      absl::StrAppend(&out, first.prefix, Bounds(first));
    } else {
      absl::StrAppend(&out, first.prefix, "[");
      for (std::size_t k = i; k < j; ++k) {
        absl::StrAppend(&out, k > i ? "," : "", Bounds(ranges[k]));
      }
      out += ']';
    }
    i = j;
  }
  return out;
}

}  // namespace gantry
