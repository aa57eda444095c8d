// Calls waiting for their nodes' cache answers
// (daemon/controller/features/datasets/dataset_cache_waits.h): answered once,
// when the last request is done or when the wait runs out, never blocking the
// loop.
#include "daemon/controller/features/datasets/dataset_cache_waits.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <vector>

#include <boost/asio/io_context.hpp>

namespace gantry {
namespace dataset_cache_waits_test {

DatasetRequest Evict(const std::string& node) {
  DatasetRequest request;
  request.kind = DatasetRequest::Kind::kEvict;
  request.node = node;
  request.dataset = "imagenet";
  return request;
}

v1::DatasetCacheResult Ok(uint64_t id) {
  v1::DatasetCacheResult result;
  result.set_request_id(id);
  result.set_ok(true);
  return result;
}

TEST_CASE("a wait is answered once its last request is done",
          "[dataset_cache_waits]") {
  boost::asio::io_context io;
  DatasetRequests requests;
  DatasetCacheWaits waits(io);
  const uint64_t a = requests.Add(Evict("n1"));
  const uint64_t b = requests.Add(Evict("n2"));
  std::vector<bool> answers;
  waits.Add({a, b}, std::chrono::hours(1), requests,
            [&](bool timed_out) { answers.push_back(timed_out); });
  CHECK(answers.empty());
  REQUIRE(requests.Finish("n1", Ok(a), 1));
  waits.Check(requests);
  CHECK(answers.empty());
  requests.NodeGone("n2", 2);  // a lost node answers too
  waits.Check(requests);
  CHECK(answers == std::vector<bool>{false});
  waits.Check(requests);
  CHECK(answers.size() == 1);
  CHECK(waits.size() == 0);
  io.run();  // the cancelled timer's handler does nothing
  CHECK(answers.size() == 1);
}

TEST_CASE("a wait whose requests are done already is answered at once",
          "[dataset_cache_waits]") {
  boost::asio::io_context io;
  DatasetRequests requests;
  DatasetCacheWaits waits(io);
  const uint64_t a = requests.Add(Evict("n1"));
  REQUIRE(requests.Finish("n1", Ok(a), 1));
  int answered = 0;
  waits.Add({a}, std::chrono::hours(1), requests,
            [&](bool timed_out) { answered += timed_out ? 10 : 1; });
  CHECK(answered == 1);
  CHECK(waits.size() == 0);
}

TEST_CASE("a wait that runs out is answered as timed out, once",
          "[dataset_cache_waits]") {
  boost::asio::io_context io;
  DatasetRequests requests;
  DatasetCacheWaits waits(io);
  const uint64_t a = requests.Add(Evict("n1"));
  std::vector<bool> answers;
  waits.Add({a}, std::chrono::milliseconds(10), requests,
            [&](bool timed_out) { answers.push_back(timed_out); });
  io.run();
  CHECK(answers == std::vector<bool>{true});
  // The node's late answer finds no wait.
  REQUIRE(requests.Finish("n1", Ok(a), 1));
  waits.Check(requests);
  CHECK(answers.size() == 1);
}

TEST_CASE("stopping answers every open wait", "[dataset_cache_waits]") {
  boost::asio::io_context io;
  DatasetRequests requests;
  DatasetCacheWaits waits(io);
  int answered = 0;
  waits.Add({requests.Add(Evict("n1"))}, std::chrono::hours(1), requests,
            [&](bool timed_out) { answered += timed_out ? 1 : 100; });
  waits.Add({requests.Add(Evict("n2"))}, std::chrono::hours(1), requests,
            [&](bool timed_out) { answered += timed_out ? 1 : 100; });
  waits.Stop();
  CHECK(answered == 2);
  io.run();  // returns: no timer left waiting
  CHECK(answered == 2);
}

}  // namespace dataset_cache_waits_test
}  // namespace gantry
