// The controller's history thread: tasks run one at a time in order, off
// the caller's thread; a full queue refuses; a stop answers what waits.
#include "daemon/controller/core/history_worker.h"

#include <future>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace gantry {
namespace history_worker_test {

TEST_CASE("history tasks run in order on a thread of their own",
          "[history_worker]") {
  HistoryWorker worker(8);
  std::vector<int> order;
  std::promise<std::thread::id> ran_on;
  REQUIRE(worker.Post([&](bool) { order.push_back(1); }));
  REQUIRE(worker.Post([&](bool cancelled) {
    order.push_back(cancelled ? -2 : 2);
    ran_on.set_value(std::this_thread::get_id());
  }));
  CHECK(ran_on.get_future().get() != std::this_thread::get_id());
  CHECK(order == std::vector<int>{1, 2});
}

TEST_CASE("a full queue refuses, and a stop answers what still waits",
          "[history_worker]") {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  std::vector<bool> cancelled;
  {
    HistoryWorker worker(2);
    REQUIRE(worker.Post([&](bool) {
      started.set_value();
      released.wait();
    }));
    started.get_future().wait();  // under way: no longer queued
    REQUIRE(worker.Post([&](bool c) { cancelled.push_back(c); }));
    REQUIRE(worker.Post([&](bool c) { cancelled.push_back(c); }));
    CHECK_FALSE(worker.Post([&](bool c) { cancelled.push_back(c); }));
    worker.Stop();
    CHECK_FALSE(worker.Post([&](bool c) { cancelled.push_back(c); }));
    release.set_value();
  }  // joins once the queue is answered
  CHECK(cancelled == std::vector<bool>{true, true});
}

}  // namespace history_worker_test
}  // namespace gantry
