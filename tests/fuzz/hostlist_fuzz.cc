// libFuzzer target for the hostlist parser, which reads user input
// (`--nodelist`, `gantry show hostnames ...`).
//
// Beyond "no crash": whatever ExpandHostlist accepts must survive a round
// trip through CompressHostlist (as a set) and CompressHostlistExpression
// (as the exact sequence, order and duplicates kept, as Slurm's
// `scontrol show hostlist`), and the input read as one host name per line
// must too.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/hostlist.h"

namespace {

// Small enough that each input runs in microseconds.
constexpr std::size_t kMaxHosts = 1000;

std::vector<std::string> SortedUnique(std::vector<std::string> hosts) {
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  return hosts;
}

// Names ExpandHostlist can produce (and so CompressHostlist must handle).
bool IsPlainHostName(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > ' ' && u != 0x7f && c != '[' && c != ']' && c != ',';
  });
}

void CheckRoundTrip(const std::vector<std::string>& hosts) {
  const std::string expression = gantry::CompressHostlist(hosts);
  const absl::StatusOr<std::vector<std::string>> again =
      gantry::ExpandHostlist(expression, hosts.size());
  if (!again.ok() || SortedUnique(*again) != SortedUnique(hosts) ||
      again->size() != SortedUnique(hosts).size()) {
    std::fprintf(stderr, "round trip failed for \"%s\"\n", expression.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  const absl::StatusOr<std::vector<std::string>> hosts =
      gantry::ExpandHostlist(input, kMaxHosts);
  const absl::StatusOr<std::string> compressed =
      gantry::CompressHostlistExpression(input, kMaxHosts);
  if (compressed.ok() != hosts.ok()) std::abort();
  if (hosts.ok()) {
    if (hosts->size() > kMaxHosts) std::abort();
    CheckRoundTrip(*hosts);
    const absl::StatusOr<std::vector<std::string>> again =
        gantry::ExpandHostlist(*compressed, kMaxHosts);
    if (!again.ok() || *again != *hosts ||
        gantry::CompressHostlistInOrder(*hosts) != *compressed) {
      std::fprintf(stderr, "in-order round trip failed for \"%s\"\n",
                   compressed->c_str());
      std::abort();
    }
  } else if (hosts.status().message().empty()) {
    std::abort();  // every error must say what is wrong
  }

  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= input.size() && names.size() < kMaxHosts) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string_view name = input.substr(start, end - start);
    if (IsPlainHostName(name)) names.emplace_back(name);
    start = end + 1;
  }
  CheckRoundTrip(names);
  return 0;
}
