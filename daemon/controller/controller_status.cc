// Controller: `gantry status`. The answer is built by the pure
// BuildClusterStatus (views/cluster_status.h); here the controller feeds it and
// adds its own health: version, uptime, state size on disk, commit latency.
// GPU utilization is sampled on a timer of its own (utilization_sampler.h).
#include <filesystem>
#include <system_error>

#include "daemon/controller/controller.h"
#include "daemon/controller/views/cluster_status.h"

namespace gantry {
namespace {

// Bytes in the files under `directory` (RocksDB's SSTs, logs, manifests).
// Files that vanish while it walks (a compaction) are skipped.
uint64_t DirectorySizeBytes(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code error;
  uint64_t total = 0;
  for (fs::recursive_directory_iterator it(directory, error), end;
       !error && it != end; it.increment(error)) {
    std::error_code size_error;
    if (!it->is_regular_file(size_error)) continue;
    const uintmax_t size = it->file_size(size_error);
    if (!size_error) total += size;
  }
  return total;
}

}  // namespace

v1::ClusterStatusResponse Controller::ClusterStatus() const {
  const int64_t now = clock_.NowMs();
  const v1::ListNodesResponse listing = ListNodes();
  ClusterStatusInput input;
  input.now_ms = now;
  for (const v1::NodeRecord& node : listing.nodes()) {
    input.nodes.push_back(&node);
  }
  input.jobs.reserve(core_.state.jobs.size());
  for (const auto& [id, job] : core_.state.jobs)
    input.jobs.push_back(&job.record);
  input.node_events = core_.node_events.Events();
  input.utilization = &core_.utilization.history();
  v1::ClusterStatusResponse status = BuildClusterStatus(input);
  status.set_version(GANTRY_VERSION);
  status.set_cluster_name(options_.cluster_name);
  status.set_started_ms(started_ms_);
  status.set_now_ms(now);
  status.set_state_dir(options_.state_dir);
  status.set_next_job_id(core_.state.next_job_id);
  status.set_jobs_finished(core_.state.finished_jobs);
  status.set_state_size_bytes(DirectorySizeBytes(options_.state_dir));
  status.set_last_commit_seconds(core_.commits.latencies().last());
  status.set_median_commit_seconds(core_.commits.latencies().Median());
  status.set_commits_sampled(
      static_cast<uint32_t>(core_.commits.latencies().count()));
  for (const std::unique_ptr<ControllerFeature>& feature : features_) {
    feature->FillStatus(status);
  }
  return status;
}

}  // namespace gantry
