#include "common/hostlist.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/support/status_message.h"

namespace gantry {
namespace hostlist_test {

using Hosts = std::vector<std::string>;

using testing::Message;

TEST_CASE("ExpandHostlist expands valid expressions", "[hostlist]") {
  struct Case {
    std::string expression;
    Hosts expected;
  };
  const std::vector<Case> cases = {
      {"node01", {"node01"}},
      {"node[01-04,07]", {"node01", "node02", "node03", "node04", "node07"}},
      {"node[1-3]", {"node1", "node2", "node3"}},
      // The low bound's width sets the padding; "8" pads to nothing.
      {"node[8-11]", {"node8", "node9", "node10", "node11"}},
      {"node[098-101]", {"node098", "node099", "node100", "node101"}},
      {"node[007]", {"node007"}},
      {"node[0-0]", {"node0"}},
      {"node[00-01]", {"node00", "node01"}},
      // Cross product in Slurm's order: the last group varies fastest,
      // then the first, ..., the one before last slowest.
      {"a[1-2]b[3-4]", {"a1b3", "a1b4", "a2b3", "a2b4"}},
      {"a[1-2]c[3-4]d[5-6]",
       {"a1c3d5", "a1c3d6", "a2c3d5", "a2c3d6", "a1c4d5", "a1c4d6", "a2c4d5",
        "a2c4d6"}},
      {"rack[1-2]-node[01-02]",
       {"rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"}},
      {"gpu[1-2],cpu1", {"gpu1", "gpu2", "cpu1"}},
      {"n1,n2,n3", {"n1", "n2", "n3"}},
      {" node1 , node2 ", {"node1", "node2"}},
      // Bracket lists without a prefix, as Slurm's.
      {"[1-3]", {"1", "2", "3"}},
      {"[1,3-5]", {"1", "3", "4", "5"}},
      // Spaces and tabs separate items too; empty items are skipped.
      {"n1 n2,n[3-4]", {"n1", "n2", "n3", "n4"}},
      {"a\tb", {"a", "b"}},
      {"a,,b", {"a", "b"}},
      {",a,", {"a"}},
      {"a, ,b", {"a", "b"}},
      // "lo-" is lo alone, as Slurm reads it.
      {"node[1-]", {"node1"}},
      // The width is that of the low bound as written.
      {"node[9-010]", {"node9", "node10"}},
      {"node[001-3]", {"node001", "node002", "node003"}},
      {"node1[0-2]", {"node10", "node11", "node12"}},
      // Written order and duplicates are kept: expansion is not a set.
      {"node[3,1,1]", {"node3", "node1", "node1"}},
      {"b,a", {"b", "a"}},
      {"", {}},
      {"   ", {}},
  };
  for (const Case& c : cases) {
    INFO("expression: \"" << c.expression << "\"");
    const absl::StatusOr<Hosts> hosts = ExpandHostlist(c.expression);
    REQUIRE(hosts.ok());
    CHECK(*hosts == c.expected);
  }
}

TEST_CASE("ExpandHostlist rejects malformed expressions", "[hostlist]") {
  struct Case {
    std::string expression;
    std::string message;  // the full message, or a part of it
  };
  const std::vector<Case> cases = {
      {"node[1-2", "invalid hostlist \"node[1-2\": '[' without a ']'"},
      {"node1-2]", "invalid hostlist \"node1-2]\": ']' without a '['"},
      {"node[[1]]", "nested '['"},
      // Slurm refuses text after the last bracket group.
      {"node-[1-2]-x", "text \"-x\" after the last ']' of \"node-[1-2]-x\""},
      {"node[1]b", "after the last ']'"},
      {"node[1 - 2]", "whitespace inside brackets"},
      {"node[]", "empty range in brackets"},
      {"node[1,]", "empty range in brackets"},
      {"node[,1]", "empty range in brackets"},
      {"node[3-1]",
       "invalid hostlist \"node[3-1]\": range \"3-1\" ends before "
       "it starts"},
      {"node[a-b]", "range \"a-b\" is not a number or a range lo-hi"},
      {"node[1-b]", "range \"1-b\" is not a number"},
      {"node[-1]", "range \"-1\" is not a number"},
      {"node[1-2-3]", "range \"1-2-3\" is not a number"},
      {"node[+1]", "range \"+1\" is not a number"},
      {"node[1234567890123456789]", "has more than 18 digits"},
      // Slurm's limit on one range.
      {"node[1-65537]", "range \"1-65537\" has more than 65536 hosts"},
      {std::string("node\x01", 5), "cannot hold control characters"},
      {std::string("node\0", 5), "cannot hold control characters"},
      {std::string(300, 'a'), "would be longer than 255 characters"},
      {std::string(251, 'a') + "[1-10000]", "would be longer than 255"},
  };
  for (const Case& c : cases) {
    INFO("expression: \"" << c.expression << "\"");
    const absl::StatusOr<Hosts> hosts = ExpandHostlist(c.expression);
    REQUIRE_FALSE(hosts.ok());
    CHECK(hosts.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(Message(hosts.status()), Catch::Contains(c.message));
  }
}

TEST_CASE("ExpandHostlist enforces max_hosts before allocating", "[hostlist]") {
  CHECK(ExpandHostlist("n[1-10]", 10).ok());
  CHECK(ExpandHostlist("n[1-5],m[1-5]", 10).ok());
  CHECK(ExpandHostlist("a[1-2]b[1-5]", 10).ok());
  CHECK(ExpandHostlist("n1", 0).status().code() ==
        absl::StatusCode::kInvalidArgument);

  struct Case {
    std::string expression;
    std::size_t max_hosts;
  };
  const std::vector<Case> cases = {
      {"n[1-11]", 10},
      {"n[1-5],m[1-6]", 10},
      {"a[1-2]b[1-6]", 10},
      {"n[1-5,6-11]", 10},
      // These would need petabytes; they must fail fast, not allocate.
      {"a[0-65535]b[0-65535]c[0-65535]", 1'000'000},
      {"a[0-65535]b[0-65535]c[0-65535]d[0-65535]e[0-65535]", SIZE_MAX},
  };
  for (const Case& c : cases) {
    INFO("expression: " << c.expression << " max " << c.max_hosts);
    const absl::StatusOr<Hosts> hosts =
        ExpandHostlist(c.expression, c.max_hosts);
    REQUIRE_FALSE(hosts.ok());
    CHECK_THAT(Message(hosts.status()),
               Catch::Contains("expands to more than"));
  }
  // Within an unbounded max_hosts but beyond memory: an error, no throw.
  // Not under ASan or TSan, whose operator new stops the process on an
  // impossible size rather than throwing std::bad_alloc.
#if !defined(__SANITIZE_ADDRESS__) && !defined(GANTRY_THREAD_SANITIZER)
  const absl::StatusOr<Hosts> huge =
      ExpandHostlist("a[0-65535]b[0-65535]c[0-65535]", SIZE_MAX);
  CHECK(huge.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(Message(huge.status()), Catch::Contains("more than memory"));
#endif

  CHECK(Message(ExpandHostlist("n[1-11]", 10).status()) ==
        "invalid hostlist \"n[1-11]\": expands to more than 10 hosts");
}

TEST_CASE("ExpandHostlist quotes long or binary input briefly", "[hostlist]") {
  const std::string long_garbage = std::string(10'000, 'x') + "]";
  const absl::StatusOr<Hosts> hosts = ExpandHostlist(long_garbage);
  REQUIRE_FALSE(hosts.ok());
  CHECK(Message(hosts.status()).size() < 300);
  CHECK_THAT(Message(hosts.status()), Catch::Contains("...\""));
}

TEST_CASE("CompressHostlist builds the usual expression", "[hostlist]") {
  struct Case {
    Hosts hosts;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"node01", "node02", "node03", "node07", "gpu1"}, "node[01-03,07],gpu1"},
      {{"node5"}, "node5"},
      {{}, ""},
      {{"login"}, "login"},
      {{"login", "login"}, "login"},
      {{"node3", "node1", "node2", "node2"}, "node[1-3]"},
      {{"node1", "node3"}, "node[1,3]"},
      {{"node9", "node10", "node11"}, "node[9-11]"},
      {{"node08", "node09", "node10"}, "node[08-10]"},
      {{"node098", "node099", "node100", "node101"}, "node[098-101]"},
      // Different padding widths cannot share a range.
      {{"node009", "node10"}, "node[009,10]"},
      {{"node1", "node01"}, "node[1,01]"},
      {{"node0", "node00"}, "node[0,00]"},
      {{"node01", "node1", "node02", "node2"}, "node[1-2,01-02]"},
      // A bare name and numbered names with that prefix stay apart.
      {{"node", "node1", "node2"}, "node,node[1-2]"},
      // Prefixes in order of first appearance.
      {{"gpu1", "node1", "gpu2"}, "gpu[1-2],node1"},
      {{"rack1-node01", "rack1-node02", "rack2-node01"},
       "rack1-node[01-02],rack2-node01"},
      {{"1", "2", "3"}, "[1-3]"},
      {{"", "node1"}, "node1"},
      // A digit run too long for a number is just part of the name.
      {{"n1234567890123456789", "n1234567890123456790"},
       "n1234567890123456789,n1234567890123456790"},
      {{"n123456789012345678", "n123456789012345679"},
       "n[123456789012345678-123456789012345679]"},
  };
  for (const Case& c : cases) {
    INFO("expected: " << c.expected);
    CHECK(CompressHostlist(c.hosts) == c.expected);
  }
}

TEST_CASE("Canonical expressions survive expand then compress", "[hostlist]") {
  const std::vector<std::string> expressions = {
      "node[01-03,07],gpu1", "node5",
      "node[1-100]",         "node[0001-1000]",
      "node[9-11],login",    "rack1-node[01-02],rack2-node[01-02]",
      "a[1-3],b[1-3],c",     "node[1-2,01-02]",
  };
  for (const std::string& expression : expressions) {
    INFO("expression: " << expression);
    const absl::StatusOr<Hosts> hosts = ExpandHostlist(expression);
    REQUIRE(hosts.ok());
    CHECK(CompressHostlist(*hosts) == expression);
  }
}

TEST_CASE("Any host set survives compress then expand", "[hostlist]") {
  // Deterministic pseudo-random sets mixing prefixes, widths and gaps.
  std::mt19937 random(12345);
  const std::vector<std::string> prefixes = {"node", "gpu-", "r1n", ""};
  for (int round = 0; round < 200; ++round) {
    Hosts hosts;
    const int count = std::uniform_int_distribution<int>(0, 40)(random);
    for (int i = 0; i < count; ++i) {
      const std::string& prefix = prefixes[random() % prefixes.size()];
      std::string number = std::to_string(random() % 120);
      const std::size_t width = random() % 4;
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      hosts.push_back(prefix + number);
      if (random() % 10 == 0) hosts.push_back("login" + prefix);
    }
    const std::string expression = CompressHostlist(hosts);
    INFO("expression: " << expression);
    absl::StatusOr<Hosts> expanded = ExpandHostlist(expression);
    REQUIRE(expanded.ok());
    Hosts want = hosts;
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    Hosts got = *expanded;
    std::sort(got.begin(), got.end());
    // Compression deduplicates, so the expansion has no repeats.
    CHECK(std::adjacent_find(got.begin(), got.end()) == got.end());
    CHECK(got == want);
  }
}

TEST_CASE("CompressHostlistExpression writes what scontrol show hostlist does",
          "[hostlist]") {
  struct Case {
    std::string expression;
    std::string expected;
  };
  // Each expected value is the real `scontrol show hostlist` output (Slurm
  // 22.05); tests/integration/test_hostlist_differential.py compares
  // thousands more.
  const std::vector<Case> cases = {
      {"a1,a2,a3,b01", "a[1-3],b01"},
      {"a3,a1,a2", "a[3,1-2]"},  // order kept, not sorted
      {"b1,a1", "b1,a1"},
      {"a1,b1,a2", "a1,b1,a2"},  // only neighbours share a bracket
      {"a01,a1,a2", "a[01,1-2]"},
      {"a9,a10,a11", "a[9-11]"},
      {"a09,a10", "a[09-10]"},
      {"a009,a010,a10", "a[009-010,10]"},
      {"a1,a1", "a[1,1]"},  // duplicates kept
      {"a,a1,a", "a,a1,a"},
      {"a1b2,a1b3", "a1b[2-3]"},  // only the last number is a range
      {"a1b2,a2b2", "a1b2,a2b2"},
      {"a[1-3],a[2-5]", "a[1-3,2-5]"},
      {"a0,a00,a000", "a[0,00,000]"},
      {"1,2,3", "[1-3]"},
      {"a-1,a-2", "a-[1-2]"},
      {"a1[2-3],a14", "a1[2-3],a14"},  // the prefix is kept as written
      {"x[1-2]y[1-2]", "x1y[1-2],x2y[1-2]"},
      {"a[5,1-3]", "a[5,1-3]"},
      {"n1 n2", "n[1-2]"},
      {"", ""},
  };
  for (const Case& c : cases) {
    INFO("expression: \"" << c.expression << "\"");
    const absl::StatusOr<std::string> compressed =
        CompressHostlistExpression(c.expression);
    REQUIRE(compressed.ok());
    CHECK(*compressed == c.expected);
  }
  CHECK(CompressHostlistInOrder({"a3", "a1", "a2", "b01"}) == "a[3,1-2],b01");
  CHECK(CompressHostlistExpression("a[1-2]b").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace hostlist_test
}  // namespace gantry
