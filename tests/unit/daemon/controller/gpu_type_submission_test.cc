// The controller refuses at submission, and on scontrol update, a
// --gres=gpu:TYPE:N that no node of the job's partition could ever match,
// naming the types it has; a type that a node has is accepted and runs.
// Down and drained nodes still count; right after a restart, nodes whose
// stored GPUs had no names do not get jobs refused before they register.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "daemon/controller/controller.h"
#include "daemon/controller/core/agent_link.h"
#include "tests/unit/support/controller_harness.h"

namespace gantry {
namespace gpu_type_submission_test {

class QuietLink : public AgentLink {
 public:
  void Send(const v1::ControllerMessage& message) override {
    if (message.has_launch()) ++launches;
  }
  void Close() override {}
  void Close(const absl::Status&) override {}
  std::string Peer() const override { return "fake"; }
  int launches = 0;
};

ControllerOptions Options() {
  ControllerOptions options;
  options.reconnect_grace_ms = 30'000;
  PartitionConfig gpu;
  gpu.name = "gpu";
  gpu.is_default = true;
  gpu.all_nodes = false;
  gpu.nodes = {"h1", "v1", "u1"};
  PartitionConfig big;
  big.name = "big";
  big.all_nodes = false;
  big.nodes = {"a1"};
  options.partitions = {gpu, big};
  return options;
}

class Harness : public ControllerHarness {
 public:
  Harness() : ControllerHarness(Options()) {}

  // Registers `name` with four GPUs of `model`.
  std::shared_ptr<QuietLink> Register(const std::string& name,
                                      const std::string& model) {
    auto link = std::make_shared<QuietLink>();
    v1::AgentMessage message;
    v1::Register& reg = *message.mutable_register_();
    reg.set_node_name(name);
    reg.set_address("192.0.2.1");
    reg.set_boot_id("boot-" + name);
    reg.set_agent_instance("instance-1");
    reg.set_agent_version("test");
    v1::NodeInventory& inventory = *reg.mutable_inventory();
    inventory.set_cpus(16);
    inventory.set_memory_mb(64'000);
    for (uint32_t i = 0; i < 4; ++i) {
      v1::GpuInfo& gpu = *inventory.add_gpus();
      gpu.set_index(i);
      gpu.set_model(model);
    }
    controller_->OnAgentMessage(link, message);
    Pump();
    return link;
  }

  absl::StatusOr<JobId> Submit(const std::string& type, uint32_t gpus = 1,
                               const std::string& partition = "") {
    v1::SubmitRequest submit;
    v1::JobSpec& spec = *submit.mutable_spec();
    spec.set_script("#!/bin/sh\ntrain\n");
    spec.set_working_dir("/tmp");
    spec.set_gpus_per_node(gpus);
    spec.set_gpu_type(type);
    spec.set_partition(partition);
    std::optional<absl::StatusOr<JobId>> submitted;
    controller_->Submit(submit, kAlice,
                        [&](absl::StatusOr<JobId> id) { submitted = id; });
    REQUIRE(PumpUntil([&] { return submitted.has_value(); }));
    return *submitted;
  }

  v1::JobRecord Job(JobId id) {
    absl::StatusOr<v1::GetJobResponse> job = controller_->GetJob(id, kRoot);
    REQUIRE(job.ok());
    return job->job();
  }

  // The result of an update of one job, "" when it was made.
  std::string Update(JobId id, const v1::UpdateJobRequest& changes) {
    v1::UpdateJobRequest request = changes;
    request.add_job_ids(id.value());
    std::optional<v1::UpdateJobResponse> response;
    controller_->UpdateJob(request, kAlice,
                           [&](v1::UpdateJobResponse r) { response = r; });
    REQUIRE(PumpUntil([&] { return response.has_value(); }));
    REQUIRE(response->results_size() == 1);
    return response->results(0).ok() ? "" : response->results(0).error();
  }

  void Drain(const std::string& node) {
    v1::DrainRequest request;
    request.add_nodes(node);
    request.set_reason("test");
    std::optional<absl::Status> done;
    controller_->Drain(request, kRoot, [&](absl::Status s) { done = s; });
    REQUIRE(PumpUntil([&] { return done.has_value(); }));
    REQUIRE(done->ok());
  }
};

std::string Message(const absl::StatusOr<JobId>& result) {
  return std::string(result.status().message());
}

TEST_CASE("a GPU type no node of the partition has is refused at submission",
          "[controller][gpu_type]") {
  Harness h;
  auto h1 = h.Register("h1", "NVIDIA H100 80GB HBM3");
  h.Register("v1", "Tesla V100-SXM2-16GB");
  h.Register("a1", "GA100 [A100 SXM4 40GB]");

  const absl::StatusOr<JobId> refused = h.Submit("a100");
  CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Message(refused) ==
        "no node in partition gpu has GPU type a100 (GPU types there: h100, "
        "v100; partition big has a100)");
  // Part of a word is no type: an A10 is no A100.
  CHECK(Message(h.Submit("a10", 1, "big")).find("GPU type a10 ") !=
        std::string::npos);
  // Enough GPUs of the type on some node, and not of another.
  CHECK(Message(h.Submit("h100", 8)) ==
        "--gpus-per-node=8 is more than any node of partition gpu has of GPU "
        "type h100 (4)");

  // A type the partition has is accepted and placed on its node.
  const absl::StatusOr<JobId> accepted = h.Submit("H100", 2);
  REQUIRE(accepted.ok());
  REQUIRE(h.PumpUntil([&] { return h1->launches == 1; }));
  const v1::JobRecord job = h.Job(*accepted);
  CHECK(job.state() == v1::RUNNING);
  REQUIRE(job.allocation_size() == 1);
  CHECK(job.allocation(0).node() == "h1");
  // And in the partition that has the A100.
  CHECK(h.Submit("a100", 1, "big").ok());
}

TEST_CASE("down and drained nodes still count as the cluster's GPUs",
          "[controller][gpu_type]") {
  Harness h;
  h.Register("h1", "NVIDIA H100 80GB HBM3");
  h.Register("v1", "Tesla V100-SXM2-16GB");
  h.Drain("h1");
  const absl::StatusOr<JobId> waits = h.Submit("h100");
  REQUIRE(waits.ok());
  CHECK(h.Job(*waits).state() == v1::PENDING);
  // After a restart the stored nodes are the configuration, registered or
  // not, before and after the reconnect grace.
  h.clock_.AdvanceMs(1'000);
  h.StopController();
  h.StartController();
  CHECK(h.Submit("v100").ok());
  CHECK(Message(h.Submit("a100")).find("GPU types there: h100, v100") !=
        std::string::npos);
  h.clock_.AdvanceMs(60'000);
  CHECK(h.Submit("v100").ok());
  CHECK_FALSE(h.Submit("a100").ok());
}

TEST_CASE("GPUs stored without names do not refuse jobs until re-registered",
          "[controller][gpu_type]") {
  Harness h;
  h.Register("u1", "PCI 10de:20b0");
  h.Register("h1", "NVIDIA H100 80GB HBM3");
  CHECK(Message(h.Submit("a100")) ==
        "no node in partition gpu has GPU type a100 (GPU types there: h100, "
        "PCI 10de:20b0 (unnamed: no pci.ids entry on its agent))");
  h.clock_.AdvanceMs(1'000);
  h.StopController();
  h.StartController();
  // Its agent may come back with pci.ids installed: until it does (within
  // the reconnect grace) the A100 it may be is not refused.
  const absl::StatusOr<JobId> early = h.Submit("a100");
  REQUIRE(early.ok());
  auto u1 = h.Register("u1", "GA100 [A100 SXM4 40GB]");
  REQUIRE(h.PumpUntil([&] { return u1->launches == 1; }));
  CHECK(h.Job(*early).allocation(0).node() == "u1");
  CHECK(h.Submit("a100").ok());

  // Registered again without a name: refused again.
  h.Register("u1", "PCI 10de:20b0");
  CHECK_FALSE(h.Submit("a100").ok());
}

TEST_CASE("scontrol update of the partition or the GPUs is checked alike",
          "[controller][gpu_type]") {
  Harness h;
  h.Register("h1", "NVIDIA H100 80GB HBM3");
  h.Register("a1", "GA100 [A100 SXM4 40GB]");
  h.Drain("h1");
  h.Drain("a1");  // nothing starts: the jobs stay pending
  const absl::StatusOr<JobId> id = h.Submit("h100");
  REQUIRE(id.ok());

  v1::UpdateJobRequest to_big;
  to_big.set_partition("big");
  CHECK(h.Update(*id, to_big) ==
        absl::StrCat("job ", id->value(),
                     ": no node in partition big has GPU type h100 (GPU "
                     "types there: a100; partition gpu has h100)"));
  CHECK(h.Job(*id).spec().partition() == "gpu");

  v1::UpdateJobRequest gres;
  gres.set_gpus_per_node(2);
  gres.set_gpu_type("a100");
  CHECK(h.Update(*id, gres).find(
            "no node in partition gpu has GPU type a100") != std::string::npos);
  CHECK(h.Job(*id).spec().gpu_type() == "h100");

  // Both at once: the A100 partition with A100 GPUs.
  gres.set_partition("big");
  CHECK(h.Update(*id, gres) == "");
  const v1::JobRecord updated = h.Job(*id);
  CHECK(updated.spec().partition() == "big");
  CHECK(updated.spec().gpu_type() == "a100");
  CHECK(updated.spec().gpus_per_node() == 2);

  // Gres=gpu:1 keeps no type.
  v1::UpdateJobRequest untyped;
  untyped.set_gpus_per_node(1);
  untyped.set_gpu_type("");
  CHECK(h.Update(*id, untyped) == "");
  CHECK(h.Job(*id).spec().gpu_type().empty());
  CHECK(h.Job(*id).spec().gpus_per_node() == 1);
}

}  // namespace gpu_type_submission_test
}  // namespace gantry
