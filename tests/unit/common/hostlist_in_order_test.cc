// CompressHostlistInOrder against what Slurm 22.05's `scontrol show hostlist`
// printed for the same names (recorded from the real tool).
#include "common/hostlist.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_split.h"

namespace gantry {
namespace hostlist_in_order_test {

TEST_CASE("compressed in order, as scontrol show hostlist", "[hostlist]") {
  const std::pair<const char*, const char*> kCases[] = {
      {"n3,n1,n2", "n[3,1-2]"},
      {"n1,x1,n2", "n1,x1,n2"},
      {"n1,n2,n3,n2", "n[1-3,2]"},
      {"n01,n1,n02", "n[01,1,02]"},
      {"n9,n10,n11", "n[9-11]"},
      {"foo,n1,bar", "foo,n1,bar"},
      {"n1,n1", "n[1,1]"},
      {"n09,n10", "n[09-10]"},
      {"n099,n100", "n[099-100]"},
      {"n1", "n1"},
      {"a1b2,a1b3", "a1b[2-3]"},
      {"rack1-n01,rack1-n02,rack2-n01", "rack1-n[01-02],rack2-n01"},
      {"n007,n8", "n[007,8]"},
      {"n8,n009", "n[8,009]"},
      {"x,x", "x,x"},
      {"n0,n00,n000", "n[0,00,000]"},
      {"node001,node002,node003,node005,node004", "node[001-003,005,004]"},
      {"12,13,abc", "[12-13],abc"},
  };
  for (const auto& [names, expected] : kCases) {
    INFO(names);
    const std::vector<std::string> hosts = absl::StrSplit(names, ',');
    CHECK(CompressHostlistInOrder(hosts) == expected);
  }
  CHECK(CompressHostlistInOrder({}).empty());
}

}  // namespace hostlist_in_order_test
}  // namespace gantry
