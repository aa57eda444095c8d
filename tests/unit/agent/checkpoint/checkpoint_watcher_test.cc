// The checkpoint watcher: the last read when a job attempt ends happens on
// the watcher's own thread (Forget never reads a file itself), and a
// marker the job's user may not read is never reported.
#include "agent/checkpoint/checkpoint_watcher.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "tests/unit/support/skip.h"
#include "tests/unit/support/temp_dir.h"

namespace gantry::agent {
namespace checkpoint_watcher_test {

using std::chrono::milliseconds;

using gantry::testing::TempDir;

// Collects reports from the watcher's thread.
class Reports {
 public:
  CheckpointWatcher::Reporter Reporter() {
    return [this](const v1::CheckpointReport& report) {
      std::lock_guard lock(mutex_);
      reports_.push_back(report);
      arrived_.notify_all();
    };
  }
  // The reports so far, after waiting up to `wait` for at least `count`.
  std::vector<v1::CheckpointReport> Await(size_t count, milliseconds wait) {
    std::unique_lock lock(mutex_);
    arrived_.wait_for(lock, wait, [&] { return reports_.size() >= count; });
    return reports_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<v1::CheckpointReport> reports_;
};

TEST_CASE("the last read when an attempt ends is the watcher's",
          "[checkpoint]") {
  TempDir dir;
  Reports reports;
  // A poll interval far longer than the test: only the final read reports.
  CheckpointWatcher watcher(reports.Reporter(), 600'000);
  watcher.Watch(7, 1, dir.path, RankIdentity{});
  std::ofstream(dir.path + "/latest") << "global_step12\n";
  watcher.Forget(7, 1);
  std::vector<v1::CheckpointReport> got = reports.Await(1, milliseconds(5000));
  REQUIRE(got.size() == 1);
  CHECK(got[0].job_id() == 7);
  CHECK(got[0].attempt() == 1);
  CHECK(got[0].path() == dir.path + "/global_step12");
  CHECK(got[0].step() == 12);
  // Forgotten: nothing more, whatever the directory holds later.
  std::ofstream(dir.path + "/latest") << "global_step13\n";
  watcher.Forget(7, 1);
  CHECK(reports.Await(2, milliseconds(300)).size() == 1);
}

TEST_CASE("a marker the user may not read is not reported",
          "[checkpoint][privileges]") {
  const passwd* nobody = ::getpwnam("nobody");
  if (::geteuid() != 0 || nobody == nullptr) {
    GANTRY_SKIP("needs root and the nobody user");
  }
  RankIdentity user;
  user.switch_user = true;
  user.uid = nobody->pw_uid;
  user.gid = nobody->pw_gid;
  user.groups = {nobody->pw_gid};
  TempDir dir;  // root's, 0700: closed to the user
  std::ofstream(dir.path + "/latest") << "global_step99\n";
  Reports reports;
  CheckpointWatcher watcher(reports.Reporter(), 50);
  watcher.Watch(8, 1, dir.path, user);
  CHECK(reports.Await(1, milliseconds(500)).empty());
  watcher.Forget(8, 1);
  CHECK(reports.Await(1, milliseconds(300)).empty());
  // The same directory for a job of the agent's own user is reported.
  watcher.Watch(9, 1, dir.path, RankIdentity{});
  CHECK(reports.Await(1, milliseconds(5000)).size() == 1);
}

}  // namespace checkpoint_watcher_test
}  // namespace gantry::agent
