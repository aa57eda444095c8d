// The expiry index's keys sort by end time, then id; the record peeks read
// one field of a serialized record without parsing the rest.
#include "daemon/store/history_index.h"

#include <catch2/catch.hpp>

#include "gantry/v1/types.pb.h"

namespace gantry {
namespace history_index_test {

TEST_CASE("expiry index keys sort by end time, then by job id",
          "[history_index]") {
  CHECK(ExpiryIndexKey(1000, 9) < ExpiryIndexKey(2000, 1));
  CHECK(ExpiryIndexKey(2000, 1) < ExpiryIndexKey(2000, 2));
  CHECK(ExpiryIndexKey(255, 1) < ExpiryIndexKey(256, 1));  // not text order
  CHECK(ExpiryIndexKey(-5, 3) == ExpiryIndexKey(0, 3));
  std::optional<ExpiryIndexEntry> entry =
      ParseExpiryIndexKey(ExpiryIndexKey(1'700'000'000'000, 42));
  REQUIRE(entry.has_value());
  CHECK(entry->end_time_ms == 1'700'000'000'000);
  CHECK(entry->job_id == 42);
  CHECK_FALSE(ParseExpiryIndexKey("short").has_value());
  CHECK(DecodeBigEndian64(EncodeBigEndian64(0x0102030405060708)) ==
        0x0102030405060708);
}

TEST_CASE("peeks read the end time and uid past megabytes of arguments",
          "[history_index]") {
  v1::JobRecord job;
  job.set_id(7);
  job.set_uid(1234);
  job.mutable_spec()->set_script("#!/bin/sh\n");
  job.mutable_spec()->add_script_args(std::string(2 << 20, 'x'));
  job.set_end_time_ms(1'700'000'123'456);
  const std::string bytes = job.SerializeAsString();
  CHECK(PeekEndTime(bytes) == 1'700'000'123'456);
  CHECK(PeekUid(bytes) == 1234u);

  v1::JobRecord unset;
  unset.set_id(8);
  CHECK(PeekEndTime(unset.SerializeAsString()) == 0);
  CHECK(PeekUid(std::string()) == 0u);

  // Cut short inside the arguments: not a record.
  CHECK_FALSE(PeekEndTime(bytes.substr(0, bytes.size() / 2)).has_value());
  CHECK_FALSE(PeekUid(std::string("\xff\xff\xff", 3)).has_value());
}

TEST_CASE("owner index keys group a user's jobs in id order",
          "[history_index]") {
  CHECK(UserIndexKey(7, 300) < UserIndexKey(7, 1000));
  CHECK(UserIndexKey(7, 1000) < UserIndexKey(8, 1));
  CHECK(UserIndexKey(7, 5).rfind(UserIndexPrefix(7), 0) == 0);
  CHECK(ParseUserIndexKey(UserIndexKey(4'000'000'000u, 42)) == 42u);
  CHECK_FALSE(ParseUserIndexKey("short").has_value());
}

TEST_CASE("history_end holds the end time and, since the owner index, the uid",
          "[history_index]") {
  const std::optional<HistoryEnd> both =
      ParseHistoryEnd(EncodeHistoryEnd(1'700'000'000'000, 1000));
  REQUIRE(both.has_value());
  CHECK(both->end_time_ms == 1'700'000'000'000);
  CHECK(both->uid == 1000u);
  const std::optional<HistoryEnd> older =
      ParseHistoryEnd(EncodeBigEndian64(5000));
  REQUIRE(older.has_value());
  CHECK(older->end_time_ms == 5000);
  CHECK_FALSE(older->uid.has_value());
  CHECK_FALSE(ParseHistoryEnd("twelve bytes").has_value());
}

}  // namespace history_index_test
}  // namespace gantry
