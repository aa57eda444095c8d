// The controller's record of dataset prefetches and evictions sent to
// agents (daemon/controller/features/datasets/dataset_requests.h): answers are
// matched to the node that was asked, a lost node fails its open requests, and
// the history stays bounded.
#include "daemon/controller/features/datasets/dataset_requests.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace dataset_requests_test {

DatasetRequest Prefetch(const std::string& node, uint64_t job = 0) {
  DatasetRequest request;
  request.kind = DatasetRequest::Kind::kPrefetch;
  request.node = node;
  request.owner_uid = 1000;
  request.dataset = "imagenet";
  request.path = "/shared/imagenet";
  request.job_id = job;
  return request;
}

v1::DatasetCacheResult Answer(uint64_t id, bool ok) {
  v1::DatasetCacheResult result;
  result.set_request_id(id);
  result.set_ok(ok);
  result.set_bytes_total(42);
  return result;
}

TEST_CASE("an answer finishes the request of the node that was asked",
          "[dataset_requests]") {
  DatasetRequests requests;
  const uint64_t first = requests.Add(Prefetch("n1"));
  const uint64_t second = requests.Add(Prefetch("n2"));
  REQUIRE(first != second);
  // Another node cannot answer for n1, and an unknown id is ignored.
  CHECK_FALSE(requests.Finish("n2", Answer(first, true), 10));
  CHECK_FALSE(requests.Finish("n1", Answer(999, true), 10));
  CHECK_FALSE(requests.Find(first)->done);
  REQUIRE(requests.Finish("n1", Answer(first, true), 10));
  CHECK(requests.Find(first)->done);
  CHECK(requests.Find(first)->done_ms == 10);
  CHECK(requests.Find(first)->result.bytes_total() == 42);
  // A second answer to the same request changes nothing.
  CHECK_FALSE(requests.Finish("n1", Answer(first, false), 11));
  CHECK(requests.Find(first)->result.ok());
  CHECK_FALSE(requests.Find(second)->done);
}

TEST_CASE("a lost node fails its open requests with the reason",
          "[dataset_requests]") {
  DatasetRequests requests;
  const uint64_t answered = requests.Add(Prefetch("n1"));
  const uint64_t open = requests.Add(Prefetch("n1"));
  const uint64_t elsewhere = requests.Add(Prefetch("n2"));
  REQUIRE(requests.Finish("n1", Answer(answered, true), 5));
  requests.NodeGone("n1", 7);
  CHECK(requests.Find(answered)->result.ok());
  CHECK(requests.Find(open)->done);
  CHECK_FALSE(requests.Find(open)->result.ok());
  CHECK(requests.Find(open)->result.message().find("n1") != std::string::npos);
  CHECK_FALSE(requests.Find(elsewhere)->done);
}

TEST_CASE("requests staged ahead are found by their job",
          "[dataset_requests]") {
  DatasetRequests requests;
  requests.Add(Prefetch("n1", 7));
  requests.Add(Prefetch("n2"));
  requests.Add(Prefetch("n3", 7));
  const auto ahead = requests.ForJob(7);
  REQUIRE(ahead.size() == 2);
  CHECK(ahead[0]->node == "n1");
  CHECK(ahead[1]->node == "n3");
  CHECK(requests.ForJob(0).empty());
  CHECK(requests.All().size() == 3);
}

TEST_CASE("finished requests are kept up to a bound, open ones always",
          "[dataset_requests]") {
  DatasetRequests requests;
  const uint64_t open = requests.Add(Prefetch("slow"));
  for (size_t i = 0; i < DatasetRequests::kKeepFinished + 10; ++i) {
    const uint64_t id = requests.Add(Prefetch("n1"));
    REQUIRE(requests.Finish("n1", Answer(id, true), 1));
  }
  CHECK(requests.All().size() == DatasetRequests::kKeepFinished + 1);
  REQUIRE(requests.Find(open) != nullptr);
  CHECK_FALSE(requests.Find(open)->done);
}

}  // namespace dataset_requests_test
}  // namespace gantry
