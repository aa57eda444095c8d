// A job's dataset staging as its nodes report it (features/datasets/):
// only the job's own nodes speak for it, a stale attempt's report is
// dropped, and the job's reason reads Staging until every node has staged
// every dataset.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "daemon/controller/controller.h"
#include "daemon/controller/core/agent_link.h"
#include "tests/unit/support/controller_harness.h"
#include "tests/unit/support/silent_agent_link.h"

namespace gantry {
namespace dataset_progress_test {

class StagingHarness : public ControllerHarness {
 public:
  StagingHarness() : ControllerHarness(Options()) {
    for (const char* name : {"n1", "n2"}) {
      links_[name] = std::make_shared<SilentLink>();
      RegisterNode(links_[name], name);
    }
  }

  static ControllerOptions Options() {
    ControllerOptions options;
    options.node_timeout_ms = 60'000;  // heartbeats are not the subject
    return options;
  }

  // A one-node job declaring two datasets, running.
  uint64_t SubmitWithDatasets() {
    v1::JobSpec spec;
    spec.set_nodes(1);
    spec.set_name("train");
    spec.set_script("#!/bin/sh\ntrain\n");
    spec.set_working_dir("/tmp");
    for (const char* name : {"imagenet", "tokens"}) {
      v1::DatasetRef& dataset = *spec.add_datasets();
      dataset.set_name(name);
      dataset.set_path(std::string("/shared/") + name);
    }
    const uint64_t id = SubmitSpec(spec, kAlice);
    REQUIRE(PumpUntil([&] { return Job(id).state() == v1::RUNNING; }));
    return id;
  }

  v1::JobRecord Job(uint64_t id) {
    absl::StatusOr<v1::GetJobResponse> job =
        controller_->GetJob(JobId(id), kRoot);
    REQUIRE(job.ok());
    return job->job();
  }

  void Progress(const std::string& node, uint64_t job, uint32_t attempt,
                const std::string& dataset, bool done) {
    v1::AgentMessage message;
    v1::DatasetProgress& progress = *message.mutable_dataset_progress();
    progress.set_job_id(job);
    progress.set_attempt(attempt);
    progress.set_dataset(dataset);
    progress.set_bytes_total(100);
    progress.set_bytes_done(done ? 100 : 40);
    progress.set_done(done);
    controller_->OnAgentMessage(links_.at(node), message);
    Pump();
  }

  std::map<std::string, std::shared_ptr<SilentLink>> links_;
};

TEST_CASE("staging is shown from the job's own nodes until all is staged",
          "[controller][datasets]") {
  StagingHarness h;
  const uint64_t id = h.SubmitWithDatasets();
  const v1::JobRecord started = h.Job(id);
  REQUIRE(started.allocation_size() == 1);
  const std::string node = started.allocation(0).node();
  const std::string other = node == "n1" ? "n2" : "n1";
  const uint32_t attempt = started.attempt();
  // Staging from the launch on: no node has reported yet.
  CHECK(started.reason() == "Staging");

  // A node that does not hold the job cannot speak for it, not even to say
  // that staging is over.
  h.Progress(other, id, attempt, "imagenet", true);
  h.Progress(other, id, attempt, "tokens", true);
  CHECK(h.Job(id).dataset_staging().empty());
  CHECK(h.Job(id).reason() == "Staging");

  // A stale attempt's report is dropped.
  h.Progress(node, id, attempt + 1, "imagenet", false);
  CHECK(h.Job(id).dataset_staging().empty());

  h.Progress(node, id, attempt, "imagenet", false);
  v1::JobRecord job = h.Job(id);
  REQUIRE(job.dataset_staging_size() == 1);
  CHECK(job.dataset_staging(0).node() == node);
  CHECK(job.dataset_staging(0).bytes_done() == 40);
  CHECK(job.reason() == "Staging");

  // One dataset done is not enough: the job declares two.
  h.Progress(node, id, attempt, "imagenet", true);
  CHECK(h.Job(id).reason() == "Staging");
  h.Progress(node, id, attempt, "tokens", true);
  job = h.Job(id);
  CHECK(job.dataset_staging_size() == 2);
  CHECK(job.reason() == "None");

  // Progress for a job that does not exist changes nothing.
  h.Progress(node, id + 100, 1, "imagenet", false);
  CHECK(h.Job(id).reason() == "None");
}

}  // namespace dataset_progress_test
}  // namespace gantry
