// RecentEnvironments: a submission whose environment equals one its user
// stored recently gets that one's id; anything else is remembered as new.
#include <string>

#include <catch2/catch.hpp>

#include "daemon/controller/core/recent_environments.h"

namespace gantry {
namespace recent_environments_test {

using Variables = RecentEnvironments::Variables;

Variables Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
  Variables variables;
  for (const auto& [key, value] : vars) variables[key] = value;
  return variables;
}

TEST_CASE("the same variables of the same user share the first id") {
  RecentEnvironments recent;
  const Variables shell = Env({{"PATH", "/usr/bin"}, {"HOME", "/home/ada"}});
  CHECK_FALSE(recent.FindOrRemember(1000, 10, shell).has_value());
  CHECK(recent.FindOrRemember(1000, 11, shell) == 10u);
  // Built in the other order: equal maps, equal environments.
  const Variables reordered =
      Env({{"HOME", "/home/ada"}, {"PATH", "/usr/bin"}});
  CHECK(recent.FindOrRemember(1000, 12, reordered) == 10u);
}

TEST_CASE("another user, value, variable or count is a new environment") {
  RecentEnvironments recent;
  const Variables shell = Env({{"PATH", "/usr/bin"}, {"HOME", "/home/ada"}});
  REQUIRE_FALSE(recent.FindOrRemember(1000, 10, shell).has_value());
  CHECK_FALSE(recent.FindOrRemember(1001, 11, shell).has_value());
  CHECK_FALSE(recent
                  .FindOrRemember(1000, 12,
                                  Env({{"PATH", "/usr/bin"}, {"HOME", "/tmp"}}))
                  .has_value());
  CHECK_FALSE(
      recent
          .FindOrRemember(1000, 13,
                          Env({{"PATH", "/usr/bin"}, {"HOMe", "/home/ada"}}))
          .has_value());
  CHECK_FALSE(
      recent
          .FindOrRemember(
              1000, 14,
              Env({{"PATH", "/usr/bin"}, {"HOME", "/home/ada"}, {"LANG", "C"}}))
          .has_value());
  // Swapped values under the same keys: same multiset of strings.
  CHECK_FALSE(
      recent
          .FindOrRemember(1000, 15,
                          Env({{"PATH", "/home/ada"}, {"HOME", "/usr/bin"}}))
          .has_value());
  // Each of those was remembered under its own id.
  CHECK(recent.FindOrRemember(1001, 20, shell) == 11u);
  CHECK(recent.FindOrRemember(1000, 21, shell) == 10u);
}

TEST_CASE("only the most recently used environments are remembered") {
  RecentEnvironments recent(/*capacity=*/2);
  const Variables a = Env({{"RUN", "a"}});
  const Variables b = Env({{"RUN", "b"}});
  const Variables c = Env({{"RUN", "c"}});
  REQUIRE_FALSE(recent.FindOrRemember(0, 1, a).has_value());
  REQUIRE_FALSE(recent.FindOrRemember(0, 2, b).has_value());
  REQUIRE(recent.FindOrRemember(0, 3, a) == 1u);  // a is now the newest
  REQUIRE_FALSE(recent.FindOrRemember(0, 4, c).has_value());  // drops b
  CHECK(recent.FindOrRemember(0, 5, a) == 1u);
  CHECK_FALSE(recent.FindOrRemember(0, 6, b).has_value());  // stored again
}

}  // namespace recent_environments_test
}  // namespace gantry
