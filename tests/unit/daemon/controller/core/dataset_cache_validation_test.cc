// Validation of `gantry cache` requests
// (daemon/controller/request_validation.h): a dataset NAME and PATH as
// --dataset takes them, bounded node lists of node names, a bounded wait.
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "daemon/controller/core/request_validation.h"

namespace gantry {
namespace dataset_cache_validation_test {

using namespace std::string_literals;

v1::PrefetchDatasetRequest GoodPrefetch() {
  v1::PrefetchDatasetRequest request;
  request.set_user("alice");
  request.mutable_dataset()->set_name("imagenet");
  request.mutable_dataset()->set_path("/shared/imagenet");
  request.add_nodes("node01");
  request.set_wait_seconds(60);
  return request;
}

TEST_CASE("a prefetch names a dataset as --dataset does, and its nodes",
          "[dataset_cache_validation]") {
  CHECK(ValidatePrefetchDatasetRequest(GoodPrefetch()).ok());
  struct Bad {
    const char* what;
    std::function<void(v1::PrefetchDatasetRequest&)> spoil;
    const char* says;
  };
  const std::vector<Bad> bad = {
      {"no nodes", [](auto& r) { r.clear_nodes(); }, "--nodes"},
      {"a name that is no identifier",
       [](auto& r) { r.mutable_dataset()->set_name("1mage-net"); }, "name"},
      {"a relative path",
       [](auto& r) { r.mutable_dataset()->set_path("shared/x"); }, "path"},
      {"a path out of normal form",
       [](auto& r) { r.mutable_dataset()->set_path("/shared/../etc"); },
       "normal form"},
      {"a control character in a node name",
       [](auto& r) { r.add_nodes("node\x1b[2J"); }, "not a node name"},
      {"a node name too long",
       [](auto& r) { r.add_nodes(std::string(300, 'n')); }, "not a node name"},
      {"a wait of a year",
       [](auto& r) { r.set_wait_seconds(365u * 24 * 3600); }, "wait_seconds"},
      {"a user name with a newline", [](auto& r) { r.set_user("a\nb"); },
       "user"},
  };
  for (const Bad& b : bad) {
    INFO(b.what);
    v1::PrefetchDatasetRequest request = GoodPrefetch();
    b.spoil(request);
    const absl::Status status = ValidatePrefetchDatasetRequest(request);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(status.message()).find(b.says) != std::string::npos);
  }
}

TEST_CASE("a node list is bounded", "[dataset_cache_validation]") {
  v1::PrefetchDatasetRequest request = GoodPrefetch();
  for (size_t i = 0; i < kMaxCacheRequestNodes; ++i) request.add_nodes("n1");
  const absl::Status status = ValidatePrefetchDatasetRequest(request);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()).find("limit") != std::string::npos);
}

TEST_CASE("an eviction and a listing name datasets and nodes properly",
          "[dataset_cache_validation]") {
  v1::EvictDatasetRequest evict;
  evict.set_name("imagenet");
  CHECK(ValidateEvictDatasetRequest(evict).ok());
  evict.set_name("");
  CHECK(ValidateEvictDatasetRequest(evict).code() ==
        absl::StatusCode::kInvalidArgument);
  evict.set_name("a/b");
  CHECK(ValidateEvictDatasetRequest(evict).code() ==
        absl::StatusCode::kInvalidArgument);
  evict.set_name("imagenet");
  evict.add_nodes("../etc");
  CHECK(ValidateEvictDatasetRequest(evict).code() ==
        absl::StatusCode::kInvalidArgument);

  v1::ListDatasetCacheRequest list;
  CHECK(ValidateListDatasetCacheRequest(list).ok());
  list.set_dataset("imagenet");
  list.add_nodes("node01");
  CHECK(ValidateListDatasetCacheRequest(list).ok());
  list.set_dataset("x y");
  CHECK(ValidateListDatasetCacheRequest(list).code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace dataset_cache_validation_test
}  // namespace gantry
