// Where a step task's command is looked for: the task's PATH in order, a
// slash meaning "as given", execvp's default without PATH.
#include "agent/launch/command_search.h"

#include <catch2/catch.hpp>

namespace gantry::agent {
namespace command_search_test {

using Candidates = std::vector<std::string>;

TEST_CASE("a bare name is looked for on the task's PATH, in order") {
  CHECK(CommandCandidates("python3",
                          {"HOME=/root", "PATH=/opt/venv/bin:/usr/bin"}) ==
        Candidates{"/opt/venv/bin/python3", "/usr/bin/python3"});
}

TEST_CASE("a name with a slash is used as given") {
  CHECK(CommandCandidates("./train.sh", {"PATH=/usr/bin"}) ==
        Candidates{"./train.sh"});
  CHECK(CommandCandidates("/usr/bin/env", {"PATH=/opt"}) ==
        Candidates{"/usr/bin/env"});
}

TEST_CASE("an empty PATH entry is the working directory") {
  CHECK(CommandCandidates("tool", {"PATH=/a::/b:"}) ==
        Candidates{"/a/tool", "tool", "/b/tool", "tool"});
  CHECK(CommandCandidates("tool", {"PATH="}) == Candidates{"tool"});
}

TEST_CASE("without PATH the search is execvp's default") {
  CHECK(CommandCandidates("date", {"HOME=/root", "XPATH=/nowhere"}) ==
        Candidates{"/bin/date", "/usr/bin/date"});
}

TEST_CASE("no command, no candidates") {
  CHECK(CommandCandidates("", {"PATH=/usr/bin"}).empty());
}

}  // namespace command_search_test
}  // namespace gantry::agent
