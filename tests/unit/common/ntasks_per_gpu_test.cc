// --ntasks-per-gpu: the task count from the GPUs, the GPUs from the task
// count, and the combinations Slurm refuses.
#include "common/ntasks_per_gpu.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/derived_resources.h"
#include "common/job_options.h"

namespace gantry {
namespace ntasks_per_gpu_test {

JobRequest Resolved(const std::vector<std::string>& words) {
  JobRequest request;
  REQUIRE(ApplyJobOptions(words, "command line", request).ok());
  REQUIRE(ResolveDerivedResources(request).ok());
  return request;
}

std::string Error(const std::vector<std::string>& words) {
  JobRequest request;
  REQUIRE(ApplyJobOptions(words, "command line", request).ok());
  const absl::Status status = ResolveDerivedResources(request);
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

TEST_CASE("tasks follow from the GPUs", "[ntasks_per_gpu]") {
  JobRequest total = Resolved({"-G", "8", "--ntasks-per-gpu=1"});
  CHECK(total.ntasks == 8u);
  CHECK(total.gpus == 8u);
  CHECK(total.gpus_left_to_controller);  // gantryd picks the nodes
  CHECK(total.warnings.empty());

  JobRequest per_node =
      Resolved({"-N", "2", "--gpus-per-node=4", "--ntasks-per-gpu=2"});
  CHECK(per_node.ntasks == 16u);
  REQUIRE(per_node.warnings.size() == 1);
  CHECK_THAT(per_node.warnings[0],
             Catch::StartsWith("--ntasks-per-gpu=2: 2 tasks share each GPU"));
}

TEST_CASE("GPUs follow from the tasks", "[ntasks_per_gpu]") {
  JobRequest request = Resolved({"-n", "6", "--ntasks-per-gpu=2"});
  CHECK(request.gpus == 3u);
  CHECK(request.ntasks == 6u);
  JobRequest rounded = Resolved({"-n", "5", "--ntasks-per-gpu=2"});
  CHECK(rounded.gpus == 3u);
}

TEST_CASE("combinations Slurm refuses", "[ntasks_per_gpu]") {
  CHECK(Error({"--ntasks-per-gpu=1"}) ==
        "--ntasks-per-gpu needs GPUs (--gpus, --gpus-per-node or "
        "--gres=gpu:N) or --ntasks");
  CHECK(Error({"-G", "2", "--gpus-per-task=1", "--ntasks-per-gpu=1"}) ==
        "--ntasks-per-gpu and --gpus-per-task are mutually exclusive");
  CHECK(Error({"-G", "2", "--ntasks-per-node=1", "--ntasks-per-gpu=1"}) ==
        "--ntasks-per-gpu and --ntasks-per-node are mutually exclusive");
  JobRequest zero;
  CHECK_FALSE(ApplyJobOptions({"--ntasks-per-gpu=0"}, "x", zero).ok());
}

}  // namespace ntasks_per_gpu_test
}  // namespace gantry
