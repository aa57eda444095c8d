#include "daemon/store/history_index.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "gantry/v1/types.pb.h"

namespace gantry {
namespace {

using google::protobuf::internal::WireFormatLite;

// The last varint stored under top-level field `number` (proto3: the last
// one wins), 0 when absent; nullopt for malformed bytes. Every other field
// is skipped without a copy.
std::optional<uint64_t> PeekVarint(std::string_view record, int number) {
  google::protobuf::io::CodedInputStream input(
      reinterpret_cast<const uint8_t*>(record.data()),
      static_cast<int>(record.size()));
  input.SetTotalBytesLimit(static_cast<int>(record.size()));
  uint64_t value = 0;
  while (true) {
    const uint32_t tag = input.ReadTag();
    if (tag == 0) {
      // The end of the bytes, or a tag that cannot be.
      if (!input.ConsumedEntireMessage()) return std::nullopt;
      return value;
    }
    if (WireFormatLite::GetTagFieldNumber(tag) == number &&
        WireFormatLite::GetTagWireType(tag) ==
            WireFormatLite::WIRETYPE_VARINT) {
      if (!input.ReadVarint64(&value)) return std::nullopt;
      continue;
    }
    if (!WireFormatLite::SkipField(&input, tag)) return std::nullopt;
  }
}

}  // namespace

std::string EncodeBigEndian64(uint64_t value) {
  std::string key(8, '\0');
  for (int i = 7; i >= 0; --i) {
    key[i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  return key;
}

uint64_t DecodeBigEndian64(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes.size() && i < 8; ++i) {
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

std::string ExpiryIndexKey(int64_t end_time_ms, uint64_t job_id) {
  return EncodeBigEndian64(
             static_cast<uint64_t>(end_time_ms < 0 ? 0 : end_time_ms)) +
         EncodeBigEndian64(job_id);
}

std::optional<ExpiryIndexEntry> ParseExpiryIndexKey(std::string_view key) {
  if (key.size() != 16) return std::nullopt;
  return ExpiryIndexEntry{
      .end_time_ms = static_cast<int64_t>(DecodeBigEndian64(key.substr(0, 8))),
      .job_id = DecodeBigEndian64(key.substr(8))};
}

std::optional<int64_t> PeekEndTime(std::string_view record) {
  std::optional<uint64_t> value =
      PeekVarint(record, v1::JobRecord::kEndTimeMsFieldNumber);
  if (!value) return std::nullopt;
  return static_cast<int64_t>(*value);
}

std::optional<uint32_t> PeekUid(std::string_view record) {
  std::optional<uint64_t> value =
      PeekVarint(record, v1::JobRecord::kUidFieldNumber);
  if (!value) return std::nullopt;
  return static_cast<uint32_t>(*value);
}

std::string UserIndexKey(uint32_t uid, uint64_t job_id) {
  return UserIndexPrefix(uid) + EncodeBigEndian64(job_id);
}

std::string UserIndexPrefix(uint32_t uid) { return EncodeBigEndian64(uid); }

std::optional<uint64_t> ParseUserIndexKey(std::string_view key) {
  if (key.size() != 16) return std::nullopt;
  return DecodeBigEndian64(key.substr(8));
}

std::string EncodeHistoryEnd(int64_t end_time_ms, uint32_t uid) {
  return EncodeBigEndian64(static_cast<uint64_t>(end_time_ms)) +
         EncodeBigEndian64(uid);
}

std::optional<HistoryEnd> ParseHistoryEnd(std::string_view value) {
  if (value.size() != 8 && value.size() != 16) return std::nullopt;
  HistoryEnd end;
  end.end_time_ms = static_cast<int64_t>(DecodeBigEndian64(value));
  if (value.size() == 16) {
    end.uid = static_cast<uint32_t>(DecodeBigEndian64(value.substr(8)));
  }
  return end;
}

}  // namespace gantry
