// LeaderFollower: the controller list the agent and the CLI share, and how
// it moves after a call that was not served.
#include "common/leader_follower.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

namespace gantry {
namespace leader_follower_test {

// What the follower made, and with which setting.
struct Made {
  std::string address;
  bool several;
};

struct Recorder {
  std::vector<Made> made;
  LeaderFollower<Made>::MakeEndpoint Make() {
    return [this](const std::string& address, bool several) {
      made.push_back({address, several});
      return Made{address, several};
    };
  }
};

TEST_CASE("a configured list is dialled in turn, each endpoint made once") {
  Recorder recorder;
  LeaderFollower<Made> follower("ctl1:6817, ctl2:6817,ctl3:6817",
                                recorder.Make());
  REQUIRE(follower.size() == 3);
  CHECK(follower.several());
  CHECK(recorder.made.size() == 3);
  CHECK(recorder.made[0].several);
  CHECK(follower.current_address() == "ctl1:6817");
  CHECK_FALSE(follower.MoveOn(std::nullopt));
  CHECK(follower.current_address() == "ctl2:6817");
  CHECK_FALSE(follower.MoveOn(std::nullopt));
  CHECK_FALSE(follower.MoveOn(std::nullopt));
  CHECK(follower.current_address() == "ctl1:6817");
  CHECK(follower.current().address == "ctl1:6817");
  CHECK(recorder.made.size() == 3);
}

TEST_CASE("a named leader is dialled next, added once if it was not listed") {
  Recorder recorder;
  LeaderFollower<Made> follower("ctl1:6817,ctl2:6817", recorder.Make());
  CHECK(follower.MoveOn(std::string("ctl2:6817")));
  CHECK(follower.current_address() == "ctl2:6817");
  // Named again by the one dialled: no move to make at once.
  CHECK_FALSE(follower.MoveOn(std::string("ctl2:6817")));
  CHECK(follower.current_address() == "ctl2:6817");
  CHECK(follower.MoveOn(std::string("ctl3:6817")));
  CHECK(follower.current_address() == "ctl3:6817");
  CHECK(follower.size() == 3);
  CHECK(follower.MoveOn(std::string("ctl1:6817")));
  CHECK(follower.size() == 3);
  CHECK(recorder.made.size() == 3);
}

TEST_CASE("one configured controller that names a leader makes it several") {
  Recorder recorder;
  LeaderFollower<Made> follower("ctl1:6817", recorder.Make());
  CHECK_FALSE(follower.several());
  CHECK_FALSE(recorder.made[0].several);
  // Unreachable with no one named: it stays on the only one it knows.
  CHECK_FALSE(follower.MoveOn(std::nullopt));
  CHECK(follower.current_address() == "ctl1:6817");
  CHECK(follower.MoveOn(std::string("ctl2:6817")));
  CHECK(follower.several());
  // The leader's endpoint is made with the several-controller settings.
  REQUIRE(recorder.made.size() == 2);
  CHECK(recorder.made[1].several);
}

TEST_CASE("the leader is read from trailing metadata when it is there") {
  std::multimap<std::string, std::string> trailers;
  CHECK_FALSE(NamedLeader(trailers).has_value());
  trailers.emplace(kLeaderMetadataKey, "ctl2:6817");
  CHECK(NamedLeader(trailers) == std::optional<std::string>("ctl2:6817"));
}

}  // namespace leader_follower_test
}  // namespace gantry
