#include "daemon/replication/replicated_batch.h"

#include <catch2/catch.hpp>

#include "daemon/replication/replication_keys.h"

namespace gantry::replication {
namespace replicated_batch_test {

StateStore::Batch FullBatch() {
  StateStore::Batch batch;
  batch.jobs.emplace_back().set_id(7);
  batch.nodes.emplace_back().set_name("node01");
  batch.events.emplace_back().set_sequence(3);
  v1::JobEnvironment environment;
  (*environment.mutable_variables())["HOME"] = "/home/alice";
  batch.environments.emplace_back(7, environment);
  batch.next_job_id = 8;
  batch.next_event_sequence = 4;
  batch.cluster_id = 99;
  batch.topology.emplace().set_source("ibnetdiscover");
  batch.retired.emplace_back().set_id(2);
  batch.expired = {1};
  batch.retired_usage.emplace();
  batch.replication_index = 12;
  return batch;
}

TEST_CASE("A batch survives the trip through the log unchanged") {
  const StateStore::Batch sent = FullBatch();
  const std::string bytes = ToReplicated(sent).SerializeAsString();
  v1::ReplicatedBatch parsed;
  REQUIRE(parsed.ParseFromString(bytes));
  const StateStore::Batch got = FromReplicated(parsed);
  REQUIRE(got.jobs.size() == 1);
  CHECK(got.jobs[0].id() == 7);
  CHECK(got.nodes[0].name() == "node01");
  CHECK(got.events[0].sequence() == 3);
  REQUIRE(got.environments.size() == 1);
  CHECK(got.environments[0].first == 7);
  CHECK(got.environments[0].second.variables().at("HOME") == "/home/alice");
  CHECK(got.next_job_id == std::optional<uint64_t>(8));
  CHECK(got.next_event_sequence == std::optional<uint64_t>(4));
  CHECK(got.cluster_id == std::optional<uint64_t>(99));
  REQUIRE(got.topology.has_value());
  CHECK(got.topology->source() == "ibnetdiscover");
  CHECK(got.retired[0].id() == 2);
  CHECK(got.expired == std::vector<uint64_t>{1});
  CHECK(got.retired_usage.has_value());
  // The index is where the entry sits in the log, not part of it.
  CHECK_FALSE(got.replication_index.has_value());
}

TEST_CASE("Absent optional fields stay absent through the log") {
  const StateStore::Batch got =
      FromReplicated(ToReplicated(StateStore::Batch()));
  CHECK(got.empty());
  CHECK_FALSE(got.next_job_id.has_value());
  CHECK_FALSE(got.topology.has_value());
}

TEST_CASE("Log keys sort as their indexes and parse back") {
  const ReplicationKeys keys("/gantry/a");
  CHECK(keys.prefix() == "/gantry/a/");
  CHECK(keys.log(9) < keys.log(10));
  CHECK(keys.log(99999) < keys.log(100000));
  CHECK(keys.LogIndexOf(keys.log(123)) == std::optional<uint64_t>(123));
  CHECK_FALSE(keys.LogIndexOf(keys.leader()).has_value());
  CHECK_FALSE(keys.LogIndexOf(keys.log_prefix() + "12").has_value());
  CHECK_FALSE(keys.LogIndexOf(keys.chunk(5, 0)).has_value());
  CHECK(keys.chunk(5, 1) < keys.chunk(5, 10));
}

}  // namespace replicated_batch_test
}  // namespace gantry::replication
