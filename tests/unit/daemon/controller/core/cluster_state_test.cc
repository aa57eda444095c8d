// The cluster's indexes follow each job's state: a pass sees the pending,
// running and still-occupying jobs, a tick the running ones and the
// pending ones with a deadline, and neither sees a job that is done.
#include "daemon/controller/core/cluster_state.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace cluster_state_test {

JobRuntime& AddJob(ClusterState& state, uint64_t id, v1::JobState job_state) {
  JobRuntime& job = state.jobs[id];
  job.record.set_id(id);
  job.record.set_state(job_state);
  state.Reindex(job);
  return job;
}

TEST_CASE("a pending job is live, and timed only with a deadline",
          "[cluster_state]") {
  ClusterState state;
  AddJob(state, 1, v1::PENDING);
  JobRuntime& with_deadline = state.jobs[2];
  with_deadline.record.set_id(2);
  with_deadline.record.set_state(v1::PENDING);
  with_deadline.record.mutable_spec()->set_deadline_ms(5'000);
  state.Reindex(with_deadline);
  CHECK(state.live_jobs.count(1) == 1);
  CHECK(state.timed_jobs.count(1) == 0);
  CHECK(state.live_jobs.count(2) == 1);
  CHECK(state.timed_jobs.count(2) == 1);
}

TEST_CASE("a finished job stays live while it occupies a node",
          "[cluster_state]") {
  ClusterState state;
  JobRuntime& job = AddJob(state, 7, v1::RUNNING);
  CHECK(state.live_jobs.at(7) == &job);
  CHECK(state.timed_jobs.at(7) == &job);
  job.occupied_nodes.insert("n1");
  job.record.set_state(v1::COMPLETED);
  state.Reindex(job);
  CHECK(state.live_jobs.count(7) == 1);
  CHECK(state.timed_jobs.count(7) == 0);
  job.occupied_nodes.clear();
  state.Reindex(job);
  CHECK(state.live_jobs.empty());
  CHECK(state.timed_jobs.empty());
  CHECK(state.jobs.count(7) == 1);  // the table keeps it until retired
}

}  // namespace cluster_state_test
}  // namespace gantry
