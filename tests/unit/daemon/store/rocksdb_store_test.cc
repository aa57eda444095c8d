// The RocksDB store in a temp dir: what is committed comes back after the
// database is closed and opened again, in id order, with counters.
#include "daemon/store/rocksdb_store.h"
#include "tests/unit/support/temp_dir.h"

#include <unistd.h>

#include <rocksdb/db.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <tuple>

namespace gantry {
namespace rocksdb_store_test {

using gantry::testing::TempDir;

v1::JobRecord MakeJob(uint64_t id, v1::JobState state) {
  v1::JobRecord job;
  job.set_id(id);
  job.set_state(state);
  job.set_user("alice");
  job.mutable_spec()->set_name("train");
  job.mutable_spec()->set_nodes(2);
  job.mutable_spec()->set_script("#!/bin/sh\necho hi\n");
  (*job.mutable_spec()->mutable_environment())["PATH"] = "/usr/bin";
  v1::NodeAllocation* a = job.add_allocation();
  a->set_node("node01");
  a->add_gpu_indices(3);
  return job;
}

std::string BigEndian(uint64_t value) {
  std::string key(8, '\0');
  for (int i = 7; i >= 0; --i, value >>= 8) key[i] = static_cast<char>(value);
  return key;
}

// Writes (family index, key, value) entries straight into the database,
// behind the store's back: `families` as an older or current gantryd
// lays them out (default first).
void WriteRaw(
    const std::string& path, const std::vector<std::string>& families,
    const std::vector<std::tuple<int, std::string, std::string>>& entries) {
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = {
      {rocksdb::kDefaultColumnFamilyName, {}}};
  for (const std::string& name : families) descriptors.push_back({name, {}});
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(options, path, descriptors, &handles, &raw).ok());
  for (const auto& [family, key, value] : entries) {
    REQUIRE(
        raw->Put(rocksdb::WriteOptions(), handles[family], key, value).ok());
  }
  for (auto* h : handles) raw->DestroyColumnFamilyHandle(h);
  delete raw;
}

TEST_CASE("store round trip survives reopen", "[store]") {
  TempDir dir;
  {
    auto store = RocksDbStore::Open(dir.path);
    REQUIRE(store.ok());
    StateStore::Batch batch;
    // Ids committed out of order come back in id order (big-endian keys).
    batch.jobs = {MakeJob(300, v1::RUNNING), MakeJob(2, v1::PENDING),
                  MakeJob(70000, v1::COMPLETED)};
    v1::NodeRecord node;
    node.set_name("node01");
    node.set_address("127.0.0.2");
    node.mutable_inventory()->set_cpus(96);
    batch.nodes = {node};
    batch.next_job_id = 70001;
    v1::EventRecord event;
    event.set_sequence(1);
    event.set_job_id(300);
    event.set_kind("submitted");
    batch.events = {event};
    event.set_sequence(2);
    event.set_job_id(2);
    batch.events.push_back(event);
    event.set_sequence(3);
    event.set_job_id(300);
    event.set_kind("started");
    batch.events.push_back(event);
    batch.next_event_sequence = 4;
    REQUIRE((*store)->Commit(batch, /*sync=*/true).ok());
    // An update of the same key replaces it.
    StateStore::Batch update;
    update.jobs = {MakeJob(300, v1::FAILED)};
    REQUIRE((*store)->Commit(update, true).ok());
  }
  auto store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  auto snapshot = (*store)->Load();
  REQUIRE(snapshot.ok());
  REQUIRE(snapshot->jobs.size() == 3);
  CHECK(snapshot->jobs[0].id() == 2);
  CHECK(snapshot->jobs[1].id() == 300);
  CHECK(snapshot->jobs[1].state() == v1::FAILED);
  CHECK(snapshot->jobs[1].allocation(0).gpu_indices(0) == 3);
  CHECK(snapshot->jobs[2].id() == 70000);
  CHECK(snapshot->jobs[0].spec().environment().at("PATH") == "/usr/bin");
  REQUIRE(snapshot->nodes.size() == 1);
  CHECK(snapshot->nodes[0].inventory().cpus() == 96);
  CHECK(snapshot->next_job_id == 70001);
  CHECK(snapshot->next_event_sequence == 4);
  auto events = (*store)->JobEvents(300);
  REQUIRE(events.ok());
  REQUIRE(events->size() == 2);
  CHECK((*events)[0].kind() == "submitted");
  CHECK((*events)[1].kind() == "started");
}

TEST_CASE("next job id never falls behind stored jobs", "[store]") {
  TempDir dir;
  auto store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  StateStore::Batch batch;
  batch.jobs = {MakeJob(41, v1::PENDING)};
  REQUIRE((*store)->Commit(batch, true).ok());
  auto snapshot = (*store)->Load();
  REQUIRE(snapshot.ok());
  CHECK(snapshot->next_job_id == 42);
}

TEST_CASE("a second open of the same database is refused clearly", "[store]") {
  TempDir dir;
  auto first = RocksDbStore::Open(dir.path);
  REQUIRE(first.ok());
  auto second = RocksDbStore::Open(dir.path);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(second.status().message()),
             Catch::Contains("cannot open state database"));
}

TEST_CASE("a corrupt record is data loss, not silence", "[store]") {
  TempDir dir;
  {
    auto store = RocksDbStore::Open(dir.path);
    REQUIRE(store.ok());
    StateStore::Batch batch;
    batch.jobs = {MakeJob(1, v1::PENDING)};
    REQUIRE((*store)->Commit(batch, true).ok());
  }
  // Overwrite the record with bytes that are not a JobRecord.
  WriteRaw(dir.path,
           {"jobs", "nodes", "events", "meta", "environments", "history",
            "history_by_end", "history_end", "history_by_user"},
           {{1, BigEndian(1), "\xff\xff\xff"}});
  auto store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  auto snapshot = (*store)->Load();
  REQUIRE_FALSE(snapshot.ok());
  CHECK(snapshot.status().code() == absl::StatusCode::kDataLoss);
}

TEST_CASE("environments are stored apart and read on demand", "[store]") {
  TempDir dir;
  {
    auto store = RocksDbStore::Open(dir.path);
    REQUIRE(store.ok());
    StateStore::Batch batch;
    v1::JobRecord job = MakeJob(5, v1::PENDING);
    job.mutable_spec()->clear_environment();
    batch.jobs = {job};
    v1::JobEnvironment environment;
    (*environment.mutable_variables())["HOME"] = "/home/alice";
    (*environment.mutable_variables())["LANG"] = "C.UTF-8";
    batch.environments.emplace_back(5, environment);
    REQUIRE((*store)->Commit(batch, true).ok());
  }
  auto store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  auto snapshot = (*store)->Load();
  REQUIRE(snapshot.ok());
  REQUIRE(snapshot->jobs.size() == 1);
  CHECK(snapshot->jobs[0].spec().environment().empty());
  auto environment = (*store)->Environment(5);
  REQUIRE(environment.ok());
  CHECK(environment->variables().size() == 2);
  CHECK(environment->variables().at("HOME") == "/home/alice");
  // None stored: an empty environment, not an error.
  auto none = (*store)->Environment(6);
  REQUIRE(none.ok());
  CHECK(none->variables().empty());
}

TEST_CASE("a database from before the environments family still opens",
          "[store]") {
  TempDir dir;
  WriteRaw(dir.path, {"jobs", "nodes", "events", "meta"},
           {{4, "schema_version", BigEndian(1)},
            {1, BigEndian(9), MakeJob(9, v1::PENDING).SerializeAsString()}});
  auto store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  auto snapshot = (*store)->Load();
  REQUIRE(snapshot.ok());
  REQUIRE(snapshot->jobs.size() == 1);
  // The old record keeps its environment inline; none is stored apart.
  CHECK(snapshot->jobs[0].spec().environment().at("PATH") == "/usr/bin");
  auto environment = (*store)->Environment(9);
  REQUIRE(environment.ok());
  CHECK(environment->variables().empty());
}

TEST_CASE("retired jobs leave the loaded state for the history", "[store]") {
  TempDir dir;
  {
    auto store = RocksDbStore::Open(dir.path);
    REQUIRE(store.ok());
    StateStore::Batch batch;
    batch.jobs = {MakeJob(1, v1::COMPLETED), MakeJob(2, v1::PENDING),
                  MakeJob(3, v1::FAILED)};
    v1::EventRecord event;
    event.set_sequence(1);
    event.set_job_id(1);
    event.set_kind("completed");
    batch.events = {event};
    REQUIRE((*store)->Commit(batch, true).ok());
    StateStore::Batch retire;
    v1::JobRecord one = MakeJob(1, v1::COMPLETED);
    one.set_end_time_ms(1000);
    v1::JobRecord three = MakeJob(3, v1::FAILED);
    three.set_end_time_ms(5000);
    retire.retired = {one, three};
    v1::FairShareRecord usage;
    (*usage.mutable_users())["alice"].set_value(42);
    retire.retired_usage = usage;
    REQUIRE((*store)->Commit(retire, true).ok());
  }
  auto store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  auto snapshot = (*store)->Load();
  REQUIRE(snapshot.ok());
  REQUIRE(snapshot->jobs.size() == 1);
  CHECK(snapshot->jobs[0].id() == 2);
  CHECK(snapshot->next_job_id == 4);  // past the history too
  REQUIRE(snapshot->retired_usage.has_value());
  CHECK(snapshot->retired_usage->users().at("alice").value() == 42);

  auto history = (*store)->HistoryJobs(1, 10);
  REQUIRE(history.ok());
  REQUIRE(history->size() == 2);
  CHECK((*history)[0].id() == 1);
  CHECK((*history)[1].id() == 3);

  // Ended before 2000: job 1 only.
  auto expiry = (*store)->ExpiredHistory(2000, 100);
  REQUIRE(expiry.ok());
  CHECK(*expiry == std::vector<uint64_t>{1});
  StateStore::Batch expire;
  expire.expired = *expiry;
  REQUIRE((*store)->Commit(expire, true).ok());
  history = (*store)->HistoryJobs(0, 10);
  REQUIRE(history.ok());
  REQUIRE(history->size() == 1);
  CHECK((*history)[0].id() == 3);
  auto events = (*store)->JobEvents(1);
  REQUIRE(events.ok());
  CHECK(events->empty());
}

v1::JobRecord Ended(uint64_t id, int64_t end_time_ms, uint32_t uid = 1000) {
  v1::JobRecord job = MakeJob(id, v1::COMPLETED);
  job.set_end_time_ms(end_time_ms);
  job.set_uid(uid);
  return job;
}

std::vector<uint64_t> Expired(RocksDbStore& store, int64_t before,
                              size_t limit = 100) {
  absl::StatusOr<std::vector<uint64_t>> expired =
      store.ExpiredHistory(before, limit);
  REQUIRE(expired.ok());
  return *expired;
}

TEST_CASE("expiry reads the history's index by end time, not by id",
          "[store]") {
  TempDir dir;
  auto store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  StateStore::Batch retire;
  // A long job with a low id ends after later, shorter ones.
  retire.retired = {Ended(1, 9000), Ended(2, 1000), Ended(3, 3000),
                    Ended(4, 2000)};
  REQUIRE((*store)->Commit(retire, true).ok());

  CHECK(Expired(**store, 2500) == std::vector<uint64_t>{2, 4});
  CHECK(Expired(**store, 10'000, 3) == std::vector<uint64_t>{2, 4, 3});
  CHECK(Expired(**store, 1000).empty());  // strictly before

  StateStore::Batch expire;
  expire.expired = {2, 4};
  REQUIRE((*store)->Commit(expire, true).ok());
  // Gone from the index with their records, also after a reopen.
  CHECK(Expired(**store, 10'000) == std::vector<uint64_t>{3, 1});
  store->reset();
  store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  CHECK(Expired(**store, 10'000) == std::vector<uint64_t>{3, 1});
  absl::StatusOr<bool> indexed = (*store)->IndexOlderHistory(10, 1 << 20);
  REQUIRE(indexed.ok());
  CHECK(*indexed);  // a new database has nothing older to index
}

TEST_CASE("a history stored before the expiry index is indexed, then expires",
          "[store]") {
  TempDir dir;
  {
    auto store = RocksDbStore::Open(dir.path);
    REQUIRE(store.ok());
    StateStore::Batch retire;
    for (uint64_t id = 1; id <= 5; ++id) {
      retire.retired.push_back(Ended(id, static_cast<int64_t>(id) * 1000));
    }
    REQUIRE((*store)->Commit(retire, true).ok());
    REQUIRE((*store)->TEST_DropHistoryIndex().ok());
  }
  auto store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  // Not in the index yet: nothing expires, nothing is lost.
  CHECK(Expired(**store, 10'000).empty());
  // A job retired after the upgrade is indexed as it is written.
  StateStore::Batch retire;
  retire.retired = {Ended(6, 500)};
  REQUIRE((*store)->Commit(retire, true).ok());
  CHECK(Expired(**store, 10'000) == std::vector<uint64_t>{6});

  // Two records per call: three calls reach every older one.
  int calls = 0;
  while (true) {
    absl::StatusOr<bool> indexed = (*store)->IndexOlderHistory(2, 1 << 20);
    REQUIRE(indexed.ok());
    ++calls;
    if (*indexed) break;
    REQUIRE(calls < 10);
    // Each call's progress survives a restart.
    store->reset();
    store = RocksDbStore::Open(dir.path);
    REQUIRE(store.ok());
  }
  CHECK(calls == 3);
  CHECK(Expired(**store, 3500) == std::vector<uint64_t>{6, 1, 2, 3});
  StateStore::Batch expire;
  expire.expired = Expired(**store, 3500);
  REQUIRE((*store)->Commit(expire, true).ok());
  CHECK(Expired(**store, 10'000) == std::vector<uint64_t>{4, 5});
}

// The ids a cursor returns, and how many came with their record.
struct CursorRead {
  std::vector<uint64_t> ids;
  size_t parsed = 0;
};
CursorRead ReadAll(StateStore::HistoryCursor& cursor) {
  CursorRead read;
  while (true) {
    auto entry = cursor.Next();
    REQUIRE(entry.ok());
    if (!entry->has_value()) return read;
    read.ids.push_back((*entry)->id);
    if ((*entry)->record) ++read.parsed;
  }
}

TEST_CASE(
    "one user's history is read through the owner index, as of one "
    "snapshot, without visiting others' records",
    "[store]") {
  TempDir dir;
  auto store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  StateStore::Batch retire;
  retire.retired = {Ended(1, 1000, 1000), Ended(2, 1000, 2000),
                    Ended(3, 1000, 1000), Ended(4, 1000, 2000),
                    Ended(5, 1000, 1000)};
  REQUIRE((*store)->Commit(retire, true).ok());

  std::unique_ptr<StateStore::HistoryCursor> cursor =
      (*store)->ReadHistory(2, 1000u);
  // What is deleted after the cursor opened is still read.
  StateStore::Batch expire;
  expire.expired = {3};
  REQUIRE((*store)->Commit(expire, true).ok());
  CursorRead read = ReadAll(*cursor);
  CHECK(read.ids == std::vector<uint64_t>{3, 5});  // never 2 or 4
  CHECK(read.parsed == 2);
  // The expired one left the owner index with its record.
  read = ReadAll(*(*store)->ReadHistory(0, 1000u));
  CHECK(read.ids == std::vector<uint64_t>{1, 5});
  read = ReadAll(*(*store)->ReadHistory(0, 2000u));
  CHECK(read.ids == std::vector<uint64_t>{2, 4});
  CHECK(ReadAll(*(*store)->ReadHistory(0, 3000u)).ids.empty());
  // Without a uid, every record comes whole.
  read = ReadAll(*(*store)->ReadHistory(0, std::nullopt));
  CHECK(read.ids == std::vector<uint64_t>{1, 2, 4, 5});
  CHECK(read.parsed == 4);
}

TEST_CASE(
    "a history stored before the owner index is indexed, and read "
    "whole meanwhile",
    "[store]") {
  // The two upgrades: from the release with the expiry index only, and
  // from one with neither.
  for (const bool owner_index_only : {true, false}) {
    INFO("owner index only: " << owner_index_only);
    TempDir dir;
    {
      auto store = RocksDbStore::Open(dir.path);
      REQUIRE(store.ok());
      StateStore::Batch retire;
      for (uint64_t id = 1; id <= 6; ++id) {
        retire.retired.push_back(Ended(id, static_cast<int64_t>(id) * 1000,
                                       id % 2 == 0 ? 2000 : 1000));
      }
      REQUIRE((*store)->Commit(retire, true).ok());
      REQUIRE((*store)->TEST_DropHistoryIndex(owner_index_only).ok());
    }
    auto store = RocksDbStore::Open(dir.path);
    REQUIRE(store.ok());
    // Before the pass: every record is looked at, others' not parsed.
    CursorRead read = ReadAll(*(*store)->ReadHistory(0, 1000u));
    CHECK(read.ids == std::vector<uint64_t>{1, 2, 3, 4, 5, 6});
    CHECK(read.parsed == 3);
    // An old record expired before the pass reaches it.
    StateStore::Batch expire;
    expire.expired = {1};
    if (owner_index_only) {
      REQUIRE((*store)->Commit(expire, true).ok());
    }
    int calls = 0;
    while (true) {
      absl::StatusOr<bool> indexed = (*store)->IndexOlderHistory(2, 1 << 20);
      REQUIRE(indexed.ok());
      if (*indexed) break;
      REQUIRE(++calls < 10);
      store->reset();  // progress survives a restart
      store = RocksDbStore::Open(dir.path);
      REQUIRE(store.ok());
    }
    if (!owner_index_only) {
      REQUIRE((*store)->Commit(expire, true).ok());
    }
    read = ReadAll(*(*store)->ReadHistory(0, 1000u));
    CHECK(read.ids == std::vector<uint64_t>{3, 5});
    CHECK(read.parsed == 2);
    // Expiring an indexed record takes its owner key with it.
    expire.expired = {3};
    REQUIRE((*store)->Commit(expire, true).ok());
    CHECK(ReadAll(*(*store)->ReadHistory(0, 1000u)).ids ==
          std::vector<uint64_t>{5});
    CHECK(ReadAll(*(*store)->ReadHistory(0, 2000u)).ids ==
          std::vector<uint64_t>{2, 4, 6});
  }
}

}  // namespace rocksdb_store_test
}  // namespace gantry
