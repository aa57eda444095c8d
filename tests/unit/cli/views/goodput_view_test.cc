// The goodput split as `gantry job` and `gantry status` print it, and its
// JSON.
#include "cli/views/goodput_view.h"

#include <catch2/catch.hpp>

namespace gantry::cli {
namespace goodput_view_test {

TEST_CASE("a goodput split reads as the ratio and its non-zero segments") {
  v1::GoodputSplit split;
  CHECK(GoodputLine(split) == "ETTR 0.0%: no time yet");
  split.set_queued_ms(4'000);
  split.set_starting_ms(2'500);
  split.set_productive_ms(3'723'000);
  split.set_lost_ms(61'000);
  split.set_detecting_ms(3'100);
  split.set_recovering_ms(40);
  split.set_ettr(0.9823);
  CHECK(GoodputLine(split) ==
        "ETTR 98.2%: queued 4.0s, starting 2.5s, productive 1:02:03, "
        "lost 1:01, detecting 3.1s, recovering 40ms");
}

TEST_CASE("a goodput split in JSON has every segment in seconds") {
  v1::GoodputSplit split;
  split.set_productive_ms(1'500);
  split.set_recovering_ms(250);
  split.set_ettr(0.5);
  const nlohmann::json json = GoodputToJson(split);
  CHECK(json.at("ettr") == 0.5);
  CHECK(json.at("productive_seconds") == 1.5);
  CHECK(json.at("recovering_seconds") == 0.25);
  CHECK(json.at("preflight_seconds") == 0.0);
  CHECK(json.at("total_seconds") == 1.75);
  CHECK(json.size() == 9);
}

}  // namespace goodput_view_test
}  // namespace gantry::cli
