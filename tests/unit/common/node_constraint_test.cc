// sbatch --constraint expressions and agent feature lists.
#include "common/node_constraint.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace node_constraint_test {

NodeConstraint Parsed(const std::string& text) {
  absl::StatusOr<NodeConstraint> parsed = NodeConstraint::Parse(text);
  INFO(text << ": " << parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<NodeConstraint> parsed = NodeConstraint::Parse(text);
  REQUIRE_FALSE(parsed.ok());
  return std::string(parsed.status().message());
}

TEST_CASE("a single feature matches the nodes that have it", "[constraint]") {
  NodeConstraint c = Parsed("a100");
  CHECK(c.ChoiceCount() == 1);
  CHECK(c.Matches({"ib", "a100"}, 0));
  CHECK_FALSE(c.Matches({"h100"}, 0));
  CHECK_FALSE(c.Matches({}, 0));
}

TEST_CASE("and binds tighter than or and parentheses group", "[constraint]") {
  NodeConstraint c = Parsed("a100|h100&ib");  // a100 | (h100 & ib)
  CHECK(c.Matches({"a100"}, 0));
  CHECK(c.Matches({"h100", "ib"}, 0));
  CHECK_FALSE(c.Matches({"h100"}, 0));
  NodeConstraint grouped = Parsed(" (a100 | h100) & ib ");
  CHECK(grouped.text() == "(a100|h100)&ib");
  CHECK_FALSE(grouped.Matches({"a100"}, 0));
  CHECK(grouped.Matches({"ib", "a100"}, 0));
}

TEST_CASE("a matching OR group gives one choice per feature", "[constraint]") {
  NodeConstraint c = Parsed("ib&[rack1|rack2|rack3]");
  CHECK(c.ChoiceCount() == 3);
  CHECK(c.Matches({"ib", "rack2"}, 1));
  CHECK_FALSE(c.Matches({"ib", "rack2"}, 0));
  CHECK_FALSE(c.Matches({"rack2"}, 1));
}

TEST_CASE("a default constraint matches nothing", "[constraint]") {
  CHECK_FALSE(NodeConstraint().Matches({"a100"}, 0));
}

TEST_CASE("malformed constraints are refused with the place", "[constraint]") {
  CHECK_THAT(ErrorOf(""), Catch::Contains("empty"));
  CHECK_THAT(ErrorOf("a100&"), Catch::Contains("feature name is missing"));
  CHECK_THAT(ErrorOf("(a100|h100"), Catch::Contains("missing ')'"));
  CHECK_THAT(ErrorOf("a100)"), Catch::Contains("unexpected ')'"));
  CHECK_THAT(ErrorOf("a100*2"), Catch::Contains("counts"));
  CHECK_THAT(ErrorOf("[a|b]&[c|d]"), Catch::Contains("only one"));
  CHECK_THAT(ErrorOf("[a&b]"), Catch::Contains("ends with ']'"));
  CHECK_THAT(ErrorOf("a$b"), Catch::Contains("position 2"));
  CHECK_THAT(ErrorOf(std::string(40, '(') + "a" + std::string(40, ')')),
             Catch::Contains("nested too deeply"));
  CHECK_THAT(ErrorOf(std::string(2000, 'a')), Catch::Contains("longer"));
}

TEST_CASE("feature lists are comma separated and checked", "[constraint]") {
  absl::StatusOr<std::vector<std::string>> list =
      ParseFeatureList(" a100, ib ,,rack-3,a100");
  REQUIRE(list.ok());
  CHECK(*list == std::vector<std::string>{"a100", "ib", "rack-3"});
  CHECK(ParseFeatureList("")->empty());
  CHECK_FALSE(ParseFeatureList("a100 ib").ok());
  CHECK_FALSE(ParseFeatureList("a|b").ok());
}

}  // namespace node_constraint_test
}  // namespace gantry
