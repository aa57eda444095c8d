// `gantry run` steps inside a running job (srun's semantics): launch across
// the job's allocation, task exits, the step's end told to whoever waits.
//
// A step's tasks are counted in the job's live ranks on their nodes, so a
// node stays held until they are gone, a node fault under a step fails the
// job, and stopping the job stops its steps. The step itself does not
// decide the job's fate: its exit status goes back to gantry run, and the
// batch script decides, as under Slurm.
//
// Threading: the controller's loop only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/core/controller_feature.h"
#include "daemon/controller/core/controller_options.h"
#include "daemon/controller/core/job_lifecycle.h"
#include "gantry/v1/agent.pb.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

class JobSteps {
 public:
  // What steps work with; every reference outlives it.
  struct Parts {
    const Clock& clock;
    const ControllerOptions& options;
    ClusterState& state;
    CommitPipeline& commits;
    JobLifecycle& lifecycle;  // a stopped job's shares, once its steps end
    const FeatureList& features;
  };
  explicit JobSteps(Parts parts);
  JobSteps(const JobSteps&) = delete;
  JobSteps& operator=(const JobSteps&) = delete;

  // From inside a running job (gantry run): start a step on its
  // allocation; `done` gets the step once its launch is durable. With
  // request.retry_when_busy, a step the job's running steps leave no room
  // for is answered busy (step_resources.h) instead of started.
  void Launch(const v1::LaunchStepRequest& request, const Caller& caller,
              std::function<void(absl::StatusOr<v1::LaunchStepResponse>)> done);
  // `done` gets the step once it has ended (at once if it has).
  void Wait(const v1::WaitStepRequest& request, const Caller& caller,
            std::function<void(absl::StatusOr<v1::StepRecord>)> done);
  // A step task started or exited on `node`.
  void OnTaskEvent(const std::string& node, const v1::RankEvent& event);
  // The job's attempt ended: its steps end with it.
  void EndOpenSteps(JobRuntime& job, const std::string& detail);
  // --wait: stops the rest of a step whose first task ended long enough ago.
  void CheckWaits(JobRuntime& job, int64_t monotonic_ms);

 private:
  void SendLaunch(const v1::LaunchStepRequest& request,
                  const v1::StepRecord& step);
  void SendKill(const JobRuntime& job, const v1::StepRecord& step, int signal,
                v1::KillRanks::Reason reason = v1::KillRanks::REASON_OTHER);
  // Records the step's end and answers its waiters once that is durable;
  // the caller stages the job.
  void EndStep(JobRuntime& job, v1::StepRecord& step,
               const std::string& detail);

  Parts parts_;
};

}  // namespace gantry
