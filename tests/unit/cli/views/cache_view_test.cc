// What `gantry cache` prints (cli/views/cache_view.h): the listing's columns
// and totals, ages, short versions, per-node outcomes of a prefetch or an
// eviction and when they make the command fail, and escaped names.
#include "cli/views/cache_view.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"

namespace gantry::cli {
namespace cache_view_test {

constexpr int64_t kNow = 1'700'000'000'000;

std::string Name(uint32_t uid) {
  return uid == 1001 ? "alice" : absl::StrCat(uid);
}

v1::ListDatasetCacheResponse Listing() {
  v1::ListDatasetCacheResponse response;
  response.set_now_ms(kNow);
  v1::CachedDatasetCopy& copy = *response.add_copies();
  copy.set_node("node01");
  copy.set_owner_uid(1001);
  copy.set_name("imagenet");
  copy.set_version("0123456789abcdef0123");
  copy.set_bytes(3 * 1024 * 1024);
  copy.set_last_use_ms(kNow - 125'000);
  copy.add_pinned_by_jobs(7);
  copy.add_pinned_by_jobs(9);
  copy.set_source("/shared/imagenet");
  v1::NodeDatasetCache& node = *response.add_nodes();
  node.set_node("node01");
  node.set_reported(true);
  node.set_connected(true);
  node.set_capacity_bytes(4 * 1024 * 1024);
  node.set_used_bytes(3 * 1024 * 1024);
  node.set_copies(2);
  node.set_pinned_copies(1);
  v1::NodeDatasetCache& bare = *response.add_nodes();
  bare.set_node("node02");
  return response;
}

TEST_CASE("ages and versions are short", "[cache_view]") {
  CHECK(FormatAge(kNow, 0) == "-");
  CHECK(FormatAge(kNow, kNow - 40'000) == "40s ago");
  CHECK(FormatAge(kNow, kNow - 12 * 60'000) == "12m ago");
  CHECK(FormatAge(kNow, kNow - 3 * 3'600'000) == "3h ago");
  CHECK(FormatAge(kNow, kNow - 2 * 86'400'000) == "2d ago");
  CHECK(FormatAge(kNow, kNow + 5000) == "0s ago");  // a node's clock ahead
  CHECK(ShortVersion("0123456789abcdef") == "0123456789ab");
  CHECK(ShortVersion("v1") == "v1");
}

TEST_CASE("the listing has one line per copy and the nodes' totals",
          "[cache_view]") {
  const std::string text = CacheListText(Listing(), Name);
  INFO(text);
  CHECK(text.find("NODE") == 0);
  for (const char* column : {"USER", "DATASET", "VERSION", "SIZE", "LAST_USE",
                             "PINNED", "SOURCE", "CACHE_USED", "COPIES"}) {
    CHECK(text.find(column) != std::string::npos);
  }
  CHECK(text.find("alice") != std::string::npos);
  CHECK(text.find("0123456789ab ") != std::string::npos);
  CHECK(text.find("0123456789abc") == std::string::npos);
  CHECK(text.find("3.0 MiB") != std::string::npos);
  CHECK(text.find("2m ago") != std::string::npos);
  CHECK(text.find("7,9") != std::string::npos);
  CHECK(text.find("3.0 MiB of 4.0 MiB (75%)") != std::string::npos);
  CHECK(text.find("no cache") != std::string::npos);
  CHECK(text.find("not connected") != std::string::npos);
  const nlohmann::json json = CacheListJson(Listing(), Name);
  CHECK(json["copies"][0]["user"] == "alice");
  CHECK(json["copies"][0]["version"] == "0123456789abcdef0123");
  CHECK(json["copies"][0]["pinned_by_jobs"].size() == 2);
  CHECK(json["nodes"][0]["capacity_bytes"] == 4 * 1024 * 1024);
}

TEST_CASE("a listing with no copy says so", "[cache_view]") {
  v1::ListDatasetCacheResponse response = Listing();
  response.clear_copies();
  CHECK(CacheListText(response, Name).find("No cached datasets") == 0);
}

TEST_CASE("names from users and agents are escaped", "[cache_view]") {
  v1::ListDatasetCacheResponse response = Listing();
  response.mutable_copies(0)->set_source("/shared/\x1b[2Jevil");
  const std::string text = CacheListText(response, Name);
  CHECK(text.find('\x1b') == std::string::npos);
}

TEST_CASE("each node's outcome is one line, and a failure fails the command",
          "[cache_view]") {
  v1::DatasetCacheActionResponse response;
  v1::DatasetNodeResult& copied = *response.add_results();
  copied.set_node("n1");
  copied.set_done(true);
  copied.set_ok(true);
  copied.set_bytes_copied(2048);
  copied.set_bytes_total(2048);
  copied.set_version("abcdef");
  v1::DatasetNodeResult& hit = *response.add_results();
  hit.set_node("n2");
  hit.set_done(true);
  hit.set_ok(true);
  hit.set_hit(true);
  hit.set_bytes_total(2048);
  CacheActionReport report = CacheActionText(response, true, 60);
  INFO(report.text);
  CHECK(report.text.find("n1: copied 2.0 KiB of 2.0 KiB (version abcdef)") !=
        std::string::npos);
  CHECK(report.text.find("n2: already cached") != std::string::npos);
  CHECK_FALSE(report.failed);

  v1::DatasetNodeResult& failed = *response.add_results();
  failed.set_node("n3");
  failed.set_done(true);
  failed.set_message("node n3 has no connected agent");
  report = CacheActionText(response, true, 60);
  CHECK(report.text.find("n3: failed: node n3 has no connected agent") !=
        std::string::npos);
  CHECK(report.failed);

  v1::DatasetCacheActionResponse open;
  open.add_results()->set_node("n4");
  CHECK_FALSE(CacheActionText(open, true, 0).failed);  // --no-wait
  CHECK(CacheActionText(open, true, 0).text == "n4: prefetch requested\n");
  report = CacheActionText(open, false, 5);
  CHECK(report.failed);
  CHECK(report.text.find("no answer within 5 s") != std::string::npos);
  CHECK(CacheActionJson(response, Name)["results"].size() == 3);
}

TEST_CASE("an eviction's success reads as such", "[cache_view]") {
  v1::DatasetCacheActionResponse response;
  v1::DatasetNodeResult& result = *response.add_results();
  result.set_node("n1");
  result.set_done(true);
  result.set_ok(true);
  CHECK(CacheActionText(response, false, 60).text == "n1: evicted\n");
}

}  // namespace cache_view_test
}  // namespace gantry::cli
