// The site's names through the controller: the cluster's (gantryd
// --cluster-name) in the answers the CLI prints it from and in every
// rank's SLURM_CLUSTER_NAME, and a job's account and QOS filled at
// submission from gantryd's defaults when the job names none.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/unit/support/controller_harness.h"

namespace gantry {
namespace site_names_test {

// Keeps what the controller sends the node.
class RecordingLink final : public AgentLink {
 public:
  void Send(const v1::ControllerMessage& message) override {
    if (message.has_launch()) launches.push_back(message.launch());
  }
  void Close() override {}
  void Close(const absl::Status&) override {}
  std::string Peer() const override { return "test"; }
  std::vector<v1::LaunchRanks> launches;
};

ControllerOptions SiteOptions(std::string default_account) {
  ControllerOptions options;
  options.cluster_name = "hpc-east";
  options.default_account = std::move(default_account);
  options.node_timeout_ms = 3'600'000;
  return options;
}

class Harness : public ControllerHarness {
 public:
  explicit Harness(std::string default_account = "")
      : ControllerHarness(SiteOptions(std::move(default_account))) {}

  void RegisterNode() { ControllerHarness::RegisterNode(link); }

  uint64_t Submit(const std::string& account, const std::string& qos) {
    v1::SubmitRequest submit;
    v1::JobSpec& spec = *submit.mutable_spec();
    spec.set_name("named");
    spec.set_script("#!/bin/sh\ntrue\n");
    spec.set_working_dir("/tmp");
    spec.set_account(account);
    spec.set_qos(qos);
    std::optional<absl::StatusOr<JobId>> submitted;
    controller_->Submit(submit, kAlice,
                        [&](absl::StatusOr<JobId> id) { submitted = id; });
    REQUIRE(PumpUntil([&] { return submitted.has_value(); }));
    INFO(submitted->status().ToString());
    REQUIRE(submitted->ok());
    return (*submitted)->value();
  }

  v1::JobSpec Spec(uint64_t id) {
    absl::StatusOr<v1::GetJobResponse> job =
        controller_->GetJob(JobId(id), kRoot);
    REQUIRE(job.ok());
    return job->job().spec();
  }

  std::shared_ptr<RecordingLink> link = std::make_shared<RecordingLink>();
};

TEST_CASE("the cluster's name is in the answers the CLI prints it from",
          "[controller][site_names]") {
  Harness h;
  CHECK(h.controller_->ClusterStatus().cluster_name() == "hpc-east");
  absl::StatusOr<v1::AccountingResponse> accounting =
      h.Accounting(v1::AccountingRequest(), kAlice);
  REQUIRE(accounting.ok());
  CHECK(accounting->cluster_name() == "hpc-east");
}

TEST_CASE("every rank gets the cluster's name, account and QOS",
          "[controller][site_names]") {
  Harness h("physics");
  h.RegisterNode();
  const uint64_t id = h.Submit("", "");
  REQUIRE(h.PumpUntil([&] { return !h.link->launches.empty(); }));
  REQUIRE(h.link->launches.size() == 1);
  const v1::LaunchRanks& launch = h.link->launches.front();
  CHECK(launch.job_id() == id);
  REQUIRE(launch.ranks_size() == 1);
  const auto& env = launch.ranks(0).environment();
  CHECK(env.at("SLURM_CLUSTER_NAME") == "hpc-east");
  CHECK(env.at("SLURM_JOB_ACCOUNT") == "physics");
  CHECK(env.at("SLURM_JOB_QOS") == "normal");
}

TEST_CASE("a job's account and QOS: its own, else gantryd's defaults",
          "[controller][site_names]") {
  SECTION("with a default account") {
    Harness h("physics");
    const v1::JobSpec defaulted = h.Spec(h.Submit("", ""));
    CHECK(defaulted.account() == "physics");
    CHECK(defaulted.qos() == "normal");
    const v1::JobSpec own = h.Spec(h.Submit("ml", "high"));
    CHECK(own.account() == "ml");
    CHECK(own.qos() == "high");
  }
  SECTION("without one the account stays unset") {
    Harness h;
    const v1::JobSpec spec = h.Spec(h.Submit("", ""));
    CHECK(spec.account().empty());
    CHECK(spec.qos() == "normal");
  }
}

TEST_CASE("an account or QOS that cannot be shown is refused",
          "[controller][site_names]") {
  Harness h;
  v1::SubmitRequest submit;
  submit.mutable_spec()->set_script("#!/bin/sh\ntrue\n");
  submit.mutable_spec()->set_working_dir("/tmp");
  submit.mutable_spec()->set_account("bad\naccount");
  std::optional<absl::StatusOr<JobId>> submitted;
  h.controller_->Submit(submit, kAlice,
                        [&](absl::StatusOr<JobId> id) { submitted = id; });
  for (int i = 0; i < 50 && !submitted; ++i) h.Pump();
  REQUIRE(submitted.has_value());
  CHECK(submitted->status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(submitted->status().message()),
             Catch::Contains("account (--account)"));
}

}  // namespace site_names_test
}  // namespace gantry
