// The listing's JSON is printed one item at a time, and must be the very
// text the whole document's dump(2) gives (scripts parse it, and people
// diff it).

#include "cli/views/json_list.h"

#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli/client/job_listing.h"

namespace gantry::cli {
namespace json_list_test {

std::string Streamed(const nlohmann::json& items) {
  std::ostringstream out;
  JsonListWriter writer(out, "jobs");
  for (const nlohmann::json& item : items) writer.Add(item);
  writer.Finish();
  return out.str();
}

std::string Whole(const nlohmann::json& items) {
  return nlohmann::json{{"jobs", items}}.dump(2) + "\n";
}

TEST_CASE("a streamed list prints as the whole document's dump(2)") {
  const nlohmann::json one = {
      {"job_id", 7},
      {"name", "line\nbreak \"quoted\""},
      {"nested", {{"list", {1, 2, {{"deep", nullptr}}}}, {"empty", {}}}},
      {"empty_list", nlohmann::json::array()},
      {"empty_object", nlohmann::json::object()}};
  for (const nlohmann::json& items :
       {nlohmann::json::array(), nlohmann::json::array({one}),
        nlohmann::json::array({one, one, 3, "text", nullptr})}) {
    INFO(items.dump());
    CHECK(Streamed(items) == Whole(items));
  }
}

TEST_CASE("a writer left without Finish still ends the document") {
  std::ostringstream out;
  {
    JsonListWriter writer(out, "jobs");
    writer.Add({{"job_id", 1}});
  }
  CHECK(nlohmann::json::parse(out.str())["jobs"][0]["job_id"] == 1);
}

TEST_CASE("a listing takes a page's records by pointer, in order") {
  JobListing listing;
  for (uint64_t first : {1, 4}) {
    JobRecords* records = google::protobuf::Arena::Create<JobRecords>(
        &listing.arena(), &listing.arena());
    for (uint64_t id = first; id < first + 3; ++id) records->Add()->set_id(id);
    const v1::JobRecord* second = &(*records)[1];
    listing.TakeAll(*records);
    CHECK(records->empty());
    CHECK(&listing.jobs()[listing.jobs().size() - 2] == second);
  }
  REQUIRE(listing.jobs().size() == 6);
  for (int i = 0; i < 6; ++i) CHECK(listing.jobs()[i].id() == uint64_t(i + 1));
}

}  // namespace json_list_test
}  // namespace gantry::cli
