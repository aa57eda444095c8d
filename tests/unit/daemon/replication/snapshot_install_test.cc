// Installing a copy of the leader's state survives a crash at every step:
// each state the directory can be left in is set up by hand and the next
// start's FinishSnapshotInstall is checked to end with exactly one
// database, the right one.
#include "daemon/replication/snapshot_install.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace gantry::replication {
namespace snapshot_install_test {

namespace fs = std::filesystem;

class StateDir {
 public:
  StateDir()
      : dir_(fs::temp_directory_path() /
             ("gantry-snapshot-install-" + std::to_string(getpid()))),
        paths_(dir_.string()) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~StateDir() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  const SnapshotPaths& paths() const { return paths_; }

  // A directory standing for a database, with a file saying which one.
  void MakeDb(const std::string& path, const std::string& which) {
    fs::create_directories(path);
    std::ofstream(path + "/WHICH") << which;
  }
  std::string Which(const std::string& path) {
    std::ifstream in(path + "/WHICH");
    std::string which;
    in >> which;
    return which;
  }

 private:
  fs::path dir_;
  SnapshotPaths paths_;
};

TEST_CASE("a copy that never became ready is discarded", "[snapshot]") {
  StateDir state;
  const SnapshotPaths& paths = state.paths();
  state.MakeDb(paths.db, "old");
  state.MakeDb(paths.incoming, "partial");
  absl::StatusOr<bool> installed = FinishSnapshotInstall(paths);
  REQUIRE(installed.ok());
  CHECK_FALSE(*installed);
  CHECK(state.Which(paths.db) == "old");
  CHECK_FALSE(fs::exists(paths.incoming));
}

TEST_CASE("a ready copy replaces the database", "[snapshot]") {
  StateDir state;
  const SnapshotPaths& paths = state.paths();
  state.MakeDb(paths.db, "old");
  REQUIRE(PrepareIncoming(paths).ok());
  state.MakeDb(paths.incoming, "copy");
  REQUIRE(MarkSnapshotReady(paths, 42).ok());
  absl::StatusOr<bool> installed = FinishSnapshotInstall(paths);
  REQUIRE(installed.ok());
  CHECK(*installed);
  CHECK(state.Which(paths.db) == "copy");
  CHECK_FALSE(fs::exists(paths.incoming));
  CHECK_FALSE(fs::exists(paths.ready));
  CHECK_FALSE(fs::exists(paths.replaced));
  // The next start finds nothing to do.
  installed = FinishSnapshotInstall(paths);
  REQUIRE(installed.ok());
  CHECK_FALSE(*installed);
  CHECK(state.Which(paths.db) == "copy");
}

TEST_CASE("a crash between the two moves is finished at the next start",
          "[snapshot]") {
  StateDir state;
  const SnapshotPaths& paths = state.paths();
  // The old database moved aside, the copy not yet in its place.
  state.MakeDb(paths.replaced, "old");
  state.MakeDb(paths.incoming, "copy");
  REQUIRE(MarkSnapshotReady(paths, 42).ok());
  absl::StatusOr<bool> installed = FinishSnapshotInstall(paths);
  REQUIRE(installed.ok());
  CHECK(*installed);
  CHECK(state.Which(paths.db) == "copy");
  CHECK_FALSE(fs::exists(paths.replaced));
}

TEST_CASE("a crash after the copy moved in only tidies up", "[snapshot]") {
  StateDir state;
  const SnapshotPaths& paths = state.paths();
  state.MakeDb(paths.db, "copy");
  state.MakeDb(paths.replaced, "old");
  std::ofstream(paths.ready) << "42\n";
  REQUIRE(FinishSnapshotInstall(paths).ok());
  CHECK(state.Which(paths.db) == "copy");
  CHECK_FALSE(fs::exists(paths.replaced));
  CHECK_FALSE(fs::exists(paths.ready));
}

TEST_CASE("a mark with neither database keeps the old one", "[snapshot]") {
  StateDir state;
  const SnapshotPaths& paths = state.paths();
  state.MakeDb(paths.replaced, "old");
  std::ofstream(paths.ready) << "42\n";
  absl::StatusOr<bool> installed = FinishSnapshotInstall(paths);
  REQUIRE(installed.ok());
  CHECK_FALSE(*installed);
  CHECK(state.Which(paths.db) == "old");
}

TEST_CASE("a first start with no database at all does nothing", "[snapshot]") {
  StateDir state;
  absl::StatusOr<bool> installed = FinishSnapshotInstall(state.paths());
  REQUIRE(installed.ok());
  CHECK_FALSE(*installed);
  CHECK_FALSE(fs::exists(state.paths().db));
}

}  // namespace snapshot_install_test
}  // namespace gantry::replication
