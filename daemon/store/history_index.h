// The keys and record peeks behind the history's expiry index and its
// cursor (daemon/store/rocksdb_store.cc).
//
// The history is keyed by job id, but it expires by end time: the index
// column family `history_by_end` holds one empty value per record under
// the key (end time, job id), both big-endian, so the records past their
// retention are a prefix of it and an expiry pass reads keys only, however
// big the records are. `history_end` maps a job id to its end time, so a
// batch that names a job to expire (by id alone, as the replicated log
// carries it) finds its index key.
//
// The history is also indexed by owner: `history_by_user` holds one empty
// value per record under the key (uid, job id), both big-endian, so one
// user's records are a prefix of it and `sacct` for that user reads theirs
// alone, however many others' there are. `history_end` then maps a job id
// to its end time and its uid, so expiry finds both index keys by id.
//
// Peeks read one top-level field of a serialized v1::JobRecord without
// parsing the rest: a record may carry megabytes of script arguments, and
// the index's upkeep or a query that only wants its owner's records must
// not copy them.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gantry {

// Big-endian, so that RocksDB's byte order is numeric order.
std::string EncodeBigEndian64(uint64_t value);
// The first 8 bytes of `bytes`, big-endian (fewer: the ones there are).
uint64_t DecodeBigEndian64(std::string_view bytes);

// An end time before the epoch (none should be) sorts as the epoch.
std::string ExpiryIndexKey(int64_t end_time_ms, uint64_t job_id);
struct ExpiryIndexEntry {
  int64_t end_time_ms = 0;
  uint64_t job_id = 0;
};
// nullopt for a key of any other length (not one ExpiryIndexKey made).
std::optional<ExpiryIndexEntry> ParseExpiryIndexKey(std::string_view key);

// (uid, job id) and its prefix of one user's keys.
std::string UserIndexKey(uint32_t uid, uint64_t job_id);
std::string UserIndexPrefix(uint32_t uid);
// The job id of a UserIndexKey; nullopt for a key of any other length.
std::optional<uint64_t> ParseUserIndexKey(std::string_view key);

// What `history_end` holds for a job: its end time and its uid. A value
// written before the owner index holds the end time alone (uid nullopt).
struct HistoryEnd {
  int64_t end_time_ms = 0;
  std::optional<uint32_t> uid;
};
std::string EncodeHistoryEnd(int64_t end_time_ms, uint32_t uid);
// nullopt for a value of another length.
std::optional<HistoryEnd> ParseHistoryEnd(std::string_view value);

// The record's end_time_ms (0 when unset, as the parsed record would say);
// nullopt when the bytes are not a well-formed record.
std::optional<int64_t> PeekEndTime(std::string_view record);
// The record's uid, likewise.
std::optional<uint32_t> PeekUid(std::string_view record);

}  // namespace gantry
