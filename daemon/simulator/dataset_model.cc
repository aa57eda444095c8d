#include "daemon/simulator/dataset_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace gantry::sim {
namespace {

// Portable hashing and uniform draws (std::hash and the standard
// distributions differ between libraries; a seed must mean one run).
uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t HashText(const std::string& text) {  // FNV-1a
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

double Uniform(uint64_t bits) {  // [0, 1)
  return static_cast<double>(Mix(bits) >> 11) * 0x1.0p-53;
}

}  // namespace

absl::Status ValidateDatasetModel(const DatasetModelConfig& c) {
  if (c.datasets_per_user == 0 || c.datasets_per_user > 1000) {
    return absl::InvalidArgumentError("--datasets-per-user must be 1 to 1000");
  }
  if (!(c.min_gb > 0) || !(c.max_gb >= c.min_gb) || !(c.max_gb <= 1e6)) {
    return absl::InvalidArgumentError(
        "--dataset-gb must be MIN-MAX with 0 < MIN <= MAX <= 1000000");
  }
  if (!(c.zipf >= 0) || !(c.zipf <= 10)) {
    return absl::InvalidArgumentError("--zipf must be 0 to 10");
  }
  if (!(c.job_share >= 0) || !(c.job_share <= 1)) {
    return absl::InvalidArgumentError("--job-share must be 0 to 1");
  }
  if (!(c.cache_gb >= 0) || !(c.cache_gb <= 1e7)) {
    return absl::InvalidArgumentError("--cache-gb must be 0 to 10000000");
  }
  return absl::OkStatus();
}

std::optional<DatasetNeed> DatasetOf(const DatasetModelConfig& c,
                                     const TraceJob& job) {
  const uint64_t job_bits = Mix(c.seed ^ Mix(job.id.value()));
  if (Uniform(job_bits) >= c.job_share) return std::nullopt;
  // Zipf over the user's datasets by inverse CDF.
  std::vector<double> weights(c.datasets_per_user);
  double total = 0;
  for (uint32_t k = 0; k < c.datasets_per_user; ++k) {
    weights[k] = 1.0 / std::pow(static_cast<double>(k + 1), c.zipf);
    total += weights[k];
  }
  double draw = Uniform(job_bits + 1) * total;
  uint32_t k = 0;
  while (k + 1 < c.datasets_per_user && draw >= weights[k]) {
    draw -= weights[k];
    ++k;
  }
  const uint64_t user_bits = Mix(c.seed ^ HashText(job.user));
  const double log_min = std::log(c.min_gb), log_max = std::log(c.max_gb);
  const double gb =
      std::exp(log_min + (log_max - log_min) * Uniform(user_bits + 1 + k));
  DatasetNeed need;
  need.key.owner_uid = static_cast<uint32_t>(HashText(job.user) % 60000) + 1000;
  need.key.path = absl::StrCat("/datasets/", job.user, "/", k);
  need.bytes = static_cast<uint64_t>(std::llround(gb * 1e9));
  return need;
}

NodeCaches::NodeCaches(std::size_t nodes, uint64_t capacity_bytes)
    : capacity_(capacity_bytes),
      entries_(nodes),
      used_(nodes, 0),
      held_(nodes) {}

NodeCaches::Entry* NodeCaches::Find(std::size_t node, const DatasetKey& key) {
  for (Entry& entry : entries_[node]) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

bool NodeCaches::Read(std::size_t node, const DatasetNeed& need,
                      int64_t now_ms) {
  if (Entry* entry = Find(node, need.key)) {
    const bool hit = entry->cached;
    entry->last_use_ms = now_ms;
    ++entry->readers;
    return hit;
  }
  Entry entry{need.key, need.bytes, now_ms, 1, MakeRoom(node, need.bytes)};
  if (entry.cached) used_[node] += need.bytes;
  entries_[node].push_back(std::move(entry));
  Rebuild(node);
  return false;
}

void NodeCaches::Release(std::size_t node, const DatasetKey& key) {
  Entry* entry = Find(node, key);
  if (entry == nullptr || entry->readers == 0) return;
  if (--entry->readers == 0 && !entry->cached) {
    std::erase_if(entries_[node], [&](const Entry& e) { return e.key == key; });
  }
}

bool NodeCaches::MakeRoom(std::size_t node, uint64_t bytes) {
  if (bytes > capacity_) return false;
  std::vector<Entry>& entries = entries_[node];
  uint64_t evictable = 0;
  for (const Entry& e : entries) {
    if (e.cached && e.readers == 0) evictable += e.bytes;
  }
  if (capacity_ - used_[node] + evictable < bytes) return false;
  while (capacity_ - used_[node] < bytes) {
    auto oldest = entries.end();
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      if (it->cached && it->readers == 0 &&
          (oldest == entries.end() || it->last_use_ms < oldest->last_use_ms)) {
        oldest = it;
      }
    }
    used_[node] -= oldest->bytes;
    entries.erase(oldest);
  }
  return true;
}

void NodeCaches::Rebuild(std::size_t node) {
  std::vector<DatasetKey>& held = held_[node];
  held.clear();
  for (const Entry& e : entries_[node]) {
    if (e.cached) held.push_back(e.key);
  }
  std::sort(held.begin(), held.end());
  ++version_;
}

}  // namespace gantry::sim
