// A page of sacct: the live rows the loop took merged in id order with the
// history read off the loop, within the page's limits, with the token
// pointing after the last job looked at.
#include "daemon/controller/views/accounting_page.h"

#include <map>
#include <vector>

#include <catch2/catch.hpp>

namespace gantry {
namespace accounting_page_test {

const Caller kAlice{.uid = 1000, .gid = 1000, .user = "alice"};
const Caller kRoot{.uid = 0, .gid = 0, .user = "root", .admin = true};

v1::JobRecord Job(uint64_t id, uint32_t uid, const std::string& name) {
  v1::JobRecord job;
  job.set_id(id);
  job.set_uid(uid);
  job.set_state(v1::COMPLETED);
  job.set_submit_time_ms(1000);
  job.set_end_time_ms(2000);
  job.mutable_spec()->set_name(name);
  job.mutable_spec()->set_script("#!/bin/sh\nsecret\n");
  job.mutable_spec()->add_script_args("--token=secret");
  return job;
}

// A history as the store's cursor reads it; counts what it was asked for.
class VectorCursor final : public StateStore::HistoryCursor {
 public:
  VectorCursor(std::vector<v1::JobRecord> records, std::optional<uint32_t> uid)
      : records_(std::move(records)), uid_(uid) {}
  absl::StatusOr<std::optional<Entry>> Next() override {
    if (next_ == records_.size()) return std::optional<Entry>();
    const v1::JobRecord& record = records_[next_++];
    Entry entry;
    entry.id = record.id();
    entry.bytes = record.ByteSizeLong();
    if (!uid_ || record.uid() == *uid_) entry.record = record;
    return entry;
  }
  size_t read() const { return next_; }

 private:
  std::vector<v1::JobRecord> records_;
  std::optional<uint32_t> uid_;
  size_t next_ = 0;
};

std::vector<uint64_t> Ids(const v1::AccountingResponse& response) {
  std::vector<uint64_t> ids;
  for (const v1::JobRecord& job : response.jobs()) ids.push_back(job.id());
  return ids;
}

// One page: the live records offered as the loop offers them, then the
// history merged in.
v1::AccountingResponse Page(const std::vector<v1::JobRecord>& live,
                            std::vector<v1::JobRecord> history,
                            const Caller& caller, uint64_t after = 0,
                            AccountingPage::Limits limits = {}) {
  AccountingPage page(v1::AccountingRequest(), caller, 10'000, after, limits);
  for (const v1::JobRecord& record : live) {
    if (record.id() <= after || !page.Qualifies(record)) continue;
    if (!page.Add(page.RowOf(record))) break;
  }
  std::vector<v1::JobRecord> from;
  for (v1::JobRecord& record : history) {
    if (record.id() > after) from.push_back(std::move(record));
  }
  VectorCursor cursor(
      std::move(from),
      caller.admin ? std::nullopt : std::optional<uint32_t>(caller.uid));
  absl::StatusOr<v1::AccountingResponse> response =
      std::move(page).MergeHistory(cursor);
  REQUIRE(response.ok());
  return *response;
}

TEST_CASE("live rows and history merge in id order, each job once",
          "[accounting_page]") {
  const std::vector<v1::JobRecord> live = {Job(2, 1000, "b"),
                                           Job(5, 1000, "e")};
  // Job 5 also landed in the history while the page was made: the live
  // copy is shown, once.
  std::vector<v1::JobRecord> history = {Job(1, 1000, "a"), Job(3, 1001, "c"),
                                        Job(4, 1000, "d"), Job(5, 1000, "old")};
  v1::AccountingResponse page = Page(live, history, kRoot);
  CHECK(Ids(page) == std::vector<uint64_t>{1, 2, 3, 4, 5});
  CHECK(page.jobs(4).spec().name() == "e");
  CHECK(page.next_page_token().empty());
  for (const v1::JobRecord& job : page.jobs()) {
    CHECK(job.spec().script().empty());
    CHECK(job.spec().script_args().empty());
  }
  // Others' jobs: not on a user's page.
  CHECK(Ids(Page(live, history, kAlice)) == std::vector<uint64_t>{1, 2, 4, 5});
}

TEST_CASE(
    "a full page ends with a token after its last job, and the next "
    "goes on from there",
    "[accounting_page]") {
  std::vector<v1::JobRecord> live;
  std::vector<v1::JobRecord> history;
  for (uint64_t id = 1; id <= 20; ++id) {
    (id % 3 == 0 ? live : history).push_back(Job(id, 1000, "j"));
  }
  AccountingPage::Limits limits;
  limits.jobs = 7;
  std::vector<uint64_t> seen;
  uint64_t after = 0;
  for (int pages = 0; pages < 10; ++pages) {
    v1::AccountingResponse page = Page(live, history, kAlice, after, limits);
    for (uint64_t id : Ids(page)) seen.push_back(id);
    if (page.next_page_token().empty()) break;
    CHECK(page.jobs_size() == 7);
    after = std::stoull(page.next_page_token());
    CHECK(after == seen.back());
  }
  std::vector<uint64_t> all;
  for (uint64_t id = 1; id <= 20; ++id) all.push_back(id);
  CHECK(seen == all);
}

TEST_CASE(
    "a page reads a bounded part of the history and says where to go "
    "on",
    "[accounting_page]") {
  std::vector<v1::JobRecord> history;
  // Someone else's jobs first: passed over, but the read still counts.
  for (uint64_t id = 1; id <= 10; ++id) history.push_back(Job(id, 1001, "x"));
  history.push_back(Job(11, 1000, "mine"));
  const std::vector<v1::JobRecord> live = {Job(4, 1000, "live")};
  AccountingPage::Limits limits;
  limits.history_records = 6;
  v1::AccountingResponse first = Page(live, history, kAlice, 0, limits);
  // Read ids 1-6; the live job below the cut is on the page.
  CHECK(Ids(first) == std::vector<uint64_t>{4});
  CHECK(first.next_page_token() == "6");
  v1::AccountingResponse second = Page(live, history, kAlice, 6, limits);
  CHECK(Ids(second) == std::vector<uint64_t>{11});
  CHECK(second.next_page_token().empty());

  // A byte bound too: one big record per page at most.
  AccountingPage::Limits by_bytes;
  by_bytes.history_bytes = 1;
  v1::AccountingResponse small = Page({}, history, kRoot, 0, by_bytes);
  CHECK(Ids(small) == std::vector<uint64_t>{1});
  CHECK(small.next_page_token() == "1");
}

TEST_CASE("a live part cut by the page size is not passed by the history",
          "[accounting_page]") {
  const std::vector<v1::JobRecord> live = {Job(1, 1000, "a"), Job(2, 1000, "b"),
                                           Job(9, 1000, "c")};
  const std::vector<v1::JobRecord> history = {Job(3, 1000, "h"),
                                              Job(10, 1000, "h")};
  AccountingPage::Limits limits;
  limits.jobs = 2;
  v1::AccountingResponse page = Page(live, history, kAlice, 0, limits);
  CHECK(Ids(page) == std::vector<uint64_t>{1, 2});
  CHECK(page.next_page_token() == "2");
  page = Page(live, history, kAlice, 2, limits);
  CHECK(Ids(page) == std::vector<uint64_t>{3, 9});
  CHECK(page.next_page_token() == "9");
  page = Page(live, history, kAlice, 9, limits);
  CHECK(Ids(page) == std::vector<uint64_t>{10});
  CHECK(page.next_page_token().empty());
}

}  // namespace accounting_page_test
}  // namespace gantry
