// The RocksDB store in a temp dir: what is committed comes back after the
// database is closed and opened again, in id order, with counters.
#include "daemon/rocksdb_store.h"

#include <unistd.h>

#include <rocksdb/db.h>

#include <catch2/catch.hpp>
#include <filesystem>

namespace gantry {
namespace {

struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/gantry-store-test-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

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
  {
    rocksdb::DB* raw = nullptr;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, {}},
        {"jobs", {}},
        {"nodes", {}},
        {"events", {}},
        {"meta", {}}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), dir.path, families,
                              &handles, &raw)
                .ok());
    std::string key(8, '\0');
    key[7] = 1;
    REQUIRE(raw->Put(rocksdb::WriteOptions(), handles[1], key, "\xff\xff\xff")
                .ok());
    for (auto* h : handles) raw->DestroyColumnFamilyHandle(h);
    delete raw;
  }
  auto store = RocksDbStore::Open(dir.path);
  REQUIRE(store.ok());
  auto snapshot = (*store)->Load();
  REQUIRE_FALSE(snapshot.ok());
  CHECK(snapshot.status().code() == absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace gantry
