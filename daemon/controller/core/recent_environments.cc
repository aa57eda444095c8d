#include "daemon/controller/core/recent_environments.h"

#include <functional>
#include <string_view>

namespace gantry {

uint64_t RecentEnvironments::Fingerprint(const Variables& variables) {
  // A sum of per-variable hashes: protobuf maps iterate in no fixed order.
  const std::hash<std::string_view> hash;
  uint64_t sum = variables.size();
  for (const auto& [key, value] : variables) {
    const uint64_t h = hash(key);
    sum += (h ^ (h >> 29)) * 0x9e3779b97f4a7c15ULL + hash(value);
  }
  return sum;
}

bool RecentEnvironments::Equal(const Entry& entry, const Variables& variables) {
  if (entry.variables.size() != variables.size()) return false;
  for (const auto& [key, value] : entry.variables) {
    auto it = variables.find(key);
    if (it == variables.end() || it->second != value) return false;
  }
  return true;
}

std::optional<uint64_t> RecentEnvironments::FindOrRemember(
    uint32_t uid, uint64_t new_id, const Variables& variables) {
  const uint64_t fingerprint = Fingerprint(variables);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->uid != uid || it->fingerprint != fingerprint ||
        !Equal(*it, variables)) {
      continue;
    }
    const uint64_t id = it->id;
    if (it != entries_.begin()) {
      Entry found = std::move(*it);
      entries_.erase(it);
      entries_.push_front(std::move(found));
    }
    return id;
  }
  Entry entry{uid, fingerprint, new_id, {}};
  entry.variables.reserve(variables.size());
  for (const auto& [key, value] : variables) {
    entry.variables.emplace_back(key, value);
  }
  entries_.push_front(std::move(entry));
  if (entries_.size() > capacity_) entries_.pop_back();
  return std::nullopt;
}

}  // namespace gantry
