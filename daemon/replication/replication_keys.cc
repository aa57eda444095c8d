#include "daemon/replication/replication_keys.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry::replication {

ReplicationKeys::ReplicationKeys(std::string prefix)
    : prefix_(std::move(prefix)) {
  if (prefix_.empty() || prefix_.back() != '/') prefix_ += '/';
}

std::string ReplicationKeys::member(const std::string& name) const {
  return absl::StrCat(members(), name);
}

std::string ReplicationKeys::log(uint64_t index) const {
  return absl::StrFormat("%s%020u", log_prefix(), index);
}

std::string ReplicationKeys::chunk_prefix(uint64_t index) const {
  return absl::StrFormat("%schunk/%020u/", prefix_, index);
}

std::string ReplicationKeys::chunk(uint64_t index, uint32_t part) const {
  return absl::StrFormat("%s%06u", chunk_prefix(index), part);
}

std::optional<uint64_t> ReplicationKeys::LogIndexOf(
    const std::string& key) const {
  const std::string prefix = log_prefix();
  if (!absl::StartsWith(key, prefix)) return std::nullopt;
  const std::string digits = key.substr(prefix.size());
  uint64_t index = 0;
  if (digits.size() != 20 || !absl::SimpleAtoi(digits, &index)) {
    return std::nullopt;
  }
  return index;
}

}  // namespace gantry::replication
