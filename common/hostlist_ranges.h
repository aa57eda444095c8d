// The hostlist's internal form, shared by parsing (hostlist.cc) and
// compression (hostlist_ranges.cc): a sequence of ranges, each a prefix and
// a run of numbers written at a zero-padding width, as Slurm keeps a
// hostlist. Not part of the public interface: include common/hostlist.h.
//
// Pure value types and functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gantry::hostlist_internal {

// Longest digit run read as a number, so that `hi - lo + 1` and `value + 1`
// can never overflow uint64_t. A longer run in a name is not a number.
inline constexpr std::size_t kMaxNumberDigits = 18;

// Hosts `prefix` + lo..hi, each number padded to `width` digits; or, when
// `numbered` is false, the one host `prefix` (a name without a number).
struct HostRange {
  std::string prefix;
  uint64_t lo = 0;
  uint64_t hi = 0;
  std::size_t width = 0;
  bool numbered = false;

  uint64_t count() const { return numbered ? hi - lo + 1 : 1; }
};

// The number a run of digits (at most kMaxNumberDigits, all '0'-'9')
// writes.
uint64_t DigitsValue(std::string_view digits);

// `value` written with at least `width` digits.
std::string Pad(uint64_t value, std::size_t width);

// A host name as a one-host range: "node007" is ("node", 7, width 3);
// "login" (or a name whose trailing digits are too long) is unnumbered.
HostRange RangeOfName(std::string_view name);

// Appends `range` to `ranges`, joining it to the last one when it continues
// it (same prefix, next number, compatible padding), as Slurm's hostlist
// does when hosts are pushed one after another.
void PushRange(std::vector<HostRange>& ranges, const HostRange& range);

// Slurm's ranged string: neighbouring ranges with the same prefix share one
// bracket ("a[1-3,7],b01"); a lone number has none ("a7").
std::string FormatRanges(const std::vector<HostRange>& ranges);

}  // namespace gantry::hostlist_internal
