#include "agent/datasets/dataset_cache_report.h"

namespace gantry::agent {

v1::DatasetCacheReport DatasetCacheReportOf(
    const std::vector<CachedDataset>& entries, uint64_t capacity_bytes,
    uint64_t used_bytes) {
  v1::DatasetCacheReport report;
  for (const CachedDataset& cached : entries) {
    v1::CachedDatasetEntry& entry = *report.add_entries();
    entry.set_owner_uid(static_cast<uint32_t>(cached.uid));
    entry.set_source(cached.source);
    entry.set_name(cached.name);
    entry.set_version(cached.version);
    entry.set_bytes(cached.bytes);
    entry.set_last_use_ms(cached.last_use_ms);
    for (uint64_t job : cached.jobs) entry.add_pinned_by_jobs(job);
  }
  report.set_capacity_bytes(capacity_bytes);
  report.set_used_bytes(used_bytes);
  return report;
}

}  // namespace gantry::agent
