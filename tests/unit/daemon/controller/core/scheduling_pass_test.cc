// The scheduling pass on the core's parts alone: it starts what fits and
// gives the rest the scheduler's reason; held jobs, jobs before --begin,
// array tasks past their throttle and jobs whose dependency is not met
// wait before the scheduler with their own reason; and a waiting job's
// eligible time makes a pass due then.
#include "daemon/controller/core/scheduling_pass.h"

#include <string>

#include <catch2/catch.hpp>

#include "tests/unit/support/core_parts_harness.h"

namespace gantry {
namespace scheduling_pass_test {

// One task on one node of partition main, with `gpus` GPUs.
v1::JobSpec OneNode(uint32_t gpus) {
  v1::JobSpec spec;
  spec.set_name("job");
  spec.set_script("#!/bin/sh\ntrue\n");
  spec.set_partition("main");
  spec.set_nodes(1);
  spec.set_ntasks(1);
  spec.set_ntasks_per_node(1);
  spec.set_cpus_per_task(1);
  spec.set_gpus_per_node(gpus);
  return spec;
}

struct Harness {
  CoreParts core;
  SwitchTree tree{core.clock, core.options, core.state, core.commits};
  JobLifecycle lifecycle{
      core.LifecycleParts(),
      {.end_open_steps = [](JobRuntime&, const std::string&) {}}};
  SchedulingPass pass{{.clock = core.clock,
                       .options = core.options,
                       .state = core.state,
                       .lifecycle = lifecycle,
                       .passes = core.passes,
                       .switch_tree = tree,
                       .features = core.features}};
};

TEST_CASE("A pass starts what fits and tells the rest why they wait",
          "[scheduling_pass]") {
  Harness harness;
  harness.core.AddNode("n1", 2);
  JobRuntime& first = harness.core.AddJob(OneNode(2));
  JobRuntime& second = harness.core.AddJob(OneNode(2));
  harness.pass.Run();
  CHECK(first.record.state() == v1::RUNNING);
  REQUIRE(first.record.allocation_size() == 1);
  CHECK(first.record.allocation(0).node() == "n1");
  CHECK(second.record.state() == v1::PENDING);
  CHECK(second.record.reason() == "Resources");

  std::vector<const std::string*> names;
  std::vector<NodeSnapshot> nodes = harness.pass.NodeSnapshots(names);
  REQUIRE(names.size() == 1);
  CHECK(*names[0] == "n1");
  CHECK(nodes.size() == 1);
}

TEST_CASE("Held jobs and jobs before --begin wait before the scheduler",
          "[scheduling_pass]") {
  Harness harness;
  harness.core.AddNode("n1");
  JobRuntime& held = harness.core.AddJob(OneNode(0));
  held.record.set_held(true);
  held.record.set_reason("JobHeldUser");
  JobRuntime& later = harness.core.AddJob(OneNode(0));
  const int64_t begin_ms = harness.core.clock.NowMs() + 30'000;
  later.record.set_eligible_time_ms(begin_ms);
  harness.pass.Run();
  CHECK(held.record.state() == v1::PENDING);
  CHECK(held.record.reason() == "JobHeldUser");
  CHECK(later.record.state() == v1::PENDING);
  CHECK(later.record.reason() == "BeginTime");
  CHECK(later.record.reason_detail() == "eligible in 30 s (--begin)");

  // A pass is due once the --begin time has come, and once only.
  CHECK_FALSE(harness.pass.EligibleAgainBy(begin_ms - 1));
  CHECK(harness.pass.EligibleAgainBy(begin_ms));
  CHECK_FALSE(harness.pass.EligibleAgainBy(begin_ms + 1));
  harness.core.clock.SetMs(begin_ms);
  harness.pass.Run();
  CHECK(later.record.state() == v1::RUNNING);
}

TEST_CASE("An array throttle starts its lowest tasks first",
          "[scheduling_pass]") {
  Harness harness;
  for (const char* node : {"n1", "n2", "n3"}) harness.core.AddNode(node);
  std::vector<JobRuntime*> tasks;
  for (uint32_t task = 0; task < 3; ++task) {
    v1::JobSpec spec = OneNode(0);
    spec.set_array("0-2%1");
    JobRuntime& job = harness.core.AddJob(spec);
    job.record.set_array_job_id(harness.core.state.jobs.begin()->first);
    job.record.set_array_task_id(task);
    job.record.mutable_array()->set_max_running(1);
    tasks.push_back(&job);
  }
  harness.pass.Run();
  CHECK(tasks[0]->record.state() == v1::RUNNING);
  for (int i : {1, 2}) {
    CHECK(tasks[i]->record.state() == v1::PENDING);
    CHECK(tasks[i]->record.reason() == "JobArrayTaskLimit");
  }
}

TEST_CASE("A job waits for the job it depends on", "[scheduling_pass]") {
  Harness harness;
  harness.core.AddNode("n1", 2);
  JobRuntime& blocker = harness.core.AddJob(OneNode(2));
  blocker.record.set_held(true);
  v1::JobSpec spec = OneNode(0);
  spec.set_dependency("afterok:" + std::to_string(blocker.record.id()));
  JobRuntime& dependent = harness.core.AddJob(spec);
  harness.pass.Run();
  CHECK(dependent.record.state() == v1::PENDING);
  CHECK(dependent.record.reason() == "Dependency");
}

}  // namespace scheduling_pass_test
}  // namespace gantry
