// Field-by-field validation of client requests
// (daemon/controller/request_validation.h): every string others see refuses
// control characters, every number has a range where the controller's
// arithmetic cannot overflow.

#include "daemon/controller/core/request_validation.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "common/request_limits.h"

namespace gantry {
namespace request_validation_test {

using namespace std::string_literals;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kU32Max = std::numeric_limits<uint32_t>::max();

v1::JobSpec GoodSpec() {
  v1::JobSpec spec;
  spec.set_name("train");
  spec.set_nodes(2);
  spec.set_ntasks_per_node(8);
  spec.set_cpus_per_task(4);
  spec.set_gpus_per_node(8);
  spec.set_mem_per_node_mb(512 * 1024);
  spec.set_time_limit_seconds(3600);
  spec.set_partition("gpu");
  spec.set_output_pattern("out-%j.txt");
  spec.set_working_dir("/home/alice/run");
  spec.set_script("#!/bin/bash\necho \"\x1b[1mbold\x1b[0m\"\n");
  spec.add_script_args("--lr=\n3e-4");  // not shown to others
  (*spec.mutable_environment())["PS1"] = "\x1b[32m$ ";
  spec.set_submit_dir("/home/alice");
  return spec;
}

struct SpecCase {
  const char* what;
  std::function<void(v1::JobSpec&)> change;
  const char* message_part;  // nullptr: valid
};

TEST_CASE(
    "ValidateJobSpecFields: every field that others see or that "
    "feeds arithmetic") {
  const SpecCase cases[] = {
      {"a good spec", [](v1::JobSpec&) {}, nullptr},
      {"title escape", [](v1::JobSpec& s) { s.set_name("\x1b]0;owned\x07"); },
       "name (--job-name) contains the control character \\x1b"},
      {"clear screen", [](v1::JobSpec& s) { s.set_name("\x1b[2J"); },
       "name (--job-name)"},
      {"newline in name",
       [](v1::JobSpec& s) { s.set_name("x\n9 root fake R"); }, "\\n"},
      {"NUL in name", [](v1::JobSpec& s) { s.set_name("a\0b"s); }, "\\x00"},
      {"C1 in name", [](v1::JobSpec& s) { s.set_name("a\xc2\x9b"); },
       "\\u009b"},
      {"bad UTF-8 in name", [](v1::JobSpec& s) { s.set_name("a\xff"); },
       "not valid UTF-8"},
      {"long name", [](v1::JobSpec& s) { s.set_name(std::string(257, 'n')); },
       "the limit is 256"},
      {"partition", [](v1::JobSpec& s) { s.set_partition("gpu\n"); },
       "partition (--partition)"},
      {"output", [](v1::JobSpec& s) { s.set_output_pattern("o\x1b"); },
       "output_pattern (--output)"},
      {"error", [](v1::JobSpec& s) { s.set_error_pattern("e\r"); },
       "error_pattern (--error)"},
      {"working dir", [](v1::JobSpec& s) { s.set_working_dir("/tmp/\x07"); },
       "working_dir (--chdir)"},
      {"submit dir", [](v1::JobSpec& s) { s.set_submit_dir("/\x1b"); },
       "submit_dir"},
      {"checkpoint dir",
       [](v1::JobSpec& s) { s.set_checkpoint_dir("/ck\x7f"); },
       "checkpoint_dir (--checkpoint-dir)"},
      {"dependency", [](v1::JobSpec& s) { s.set_dependency("afterok:1\n"); },
       "dependency (--dependency)"},
      {"array", [](v1::JobSpec& s) { s.set_array("0-3\x1b"); },
       "array (--array)"},
      {"nodelist", [](v1::JobSpec& s) { s.add_required_nodes("n\x1b"); },
       "required_nodes (--nodelist)"},
      {"exclude", [](v1::JobSpec& s) { s.add_excluded_nodes("n\n"); },
       "excluded_nodes (--exclude)"},
      {"constraint", [](v1::JobSpec& s) { s.set_constraint("a100\x07"); },
       "constraint (--constraint)"},
      {"gpu type", [](v1::JobSpec& s) { s.set_gpu_type("a100\x1b"); },
       "gpu_type"},
      {"time 2^64-1", [](v1::JobSpec& s) { s.set_time_limit_seconds(kU64Max); },
       "time_limit_seconds (--time) is 18446744073709551615 s; the limit is "
       "31536000 s (365 days; 0 means no limit)"},
      {"time a year",
       [](v1::JobSpec& s) {
         s.set_time_limit_seconds(limits::kMaxDurationSeconds);
       },
       nullptr},
      {"time a year and a second",
       [](v1::JobSpec& s) {
         s.set_time_limit_seconds(limits::kMaxDurationSeconds + 1);
       },
       "time_limit_seconds"},
      {"hang timeout",
       [](v1::JobSpec& s) { s.set_hang_timeout_seconds(kU64Max); },
       "hang_timeout_seconds (--hang-timeout)"},
      {"switch wait",
       [](v1::JobSpec& s) { s.set_switches_max_wait_seconds(kU64Max); },
       "switches_max_wait_seconds"},
      {"switches", [](v1::JobSpec& s) { s.set_max_switches(kU32Max); },
       "max_switches (--switches)"},
      {"memory", [](v1::JobSpec& s) { s.set_mem_per_node_mb(kU64Max); },
       "mem_per_node_mb (--mem) is 18446744073709551615 MB; the limit is "
       "1073741824 MB"},
      {"nodes", [](v1::JobSpec& s) { s.set_nodes(kU32Max); },
       "nodes (--nodes)"},
      {"ntasks", [](v1::JobSpec& s) { s.set_ntasks(kU32Max); },
       "ntasks (--ntasks)"},
      {"tasks per node", [](v1::JobSpec& s) { s.set_ntasks_per_node(kU32Max); },
       "ntasks_per_node"},
      {"cpus", [](v1::JobSpec& s) { s.set_cpus_per_task(kU32Max); },
       "cpus_per_task"},
      {"gpus", [](v1::JobSpec& s) { s.set_gpus_per_node(kU32Max); },
       "gpus_per_node"},
      {"restarts", [](v1::JobSpec& s) { s.set_max_restarts(kU32Max); },
       "max_restarts"},
      {"restarts unset means default",
       [](v1::JobSpec& s) { s.clear_max_restarts(); }, nullptr},
      {"begin negative", [](v1::JobSpec& s) { s.set_begin_time_ms(-1); },
       "begin_time_ms (--begin) is -1"},
      {"begin far",
       [](v1::JobSpec& s) {
         s.set_begin_time_ms(std::numeric_limits<int64_t>::max());
       },
       "begin_time_ms (--begin)"},
      {"begin 2030",
       [](v1::JobSpec& s) { s.set_begin_time_ms(1'900'000'000'000); }, nullptr},
      {"signal negative", [](v1::JobSpec& s) { s.set_warning_signal(-9); },
       "warning_signal (--signal) is -9"},
      {"signal large", [](v1::JobSpec& s) { s.set_warning_signal(65); },
       "warning_signal"},
      {"signal time",
       [](v1::JobSpec& s) { s.set_warning_signal_seconds(kU32Max); },
       "warning_signal_seconds"},
      {"script too big",
       [](v1::JobSpec& s) {
         s.set_script("#!/bin/sh\n" +
                      std::string(limits::kMaxBatchScriptBytes, '#'));
       },
       "script (bytes) is 4194314; the limit is 4194304"},
  };
  for (const SpecCase& c : cases) {
    INFO(c.what);
    v1::JobSpec spec = GoodSpec();
    c.change(spec);
    const absl::Status status = ValidateJobSpecFields(spec);
    if (c.message_part == nullptr) {
      CHECK(status.ok());
      if (!status.ok()) UNSCOPED_INFO(status.ToString());
    } else {
      CHECK(status.code() == absl::StatusCode::kInvalidArgument);
      CHECK_THAT(std::string(status.message()),
                 Catch::Contains(c.message_part));
    }
  }
}

TEST_CASE("Other requests: drain reasons, progress paths, topology, steps") {
  v1::DrainRequest drain;
  drain.add_nodes("node01");
  drain.set_reason("bad DIMM");
  CHECK(ValidateDrainRequest(drain).ok());
  drain.set_reason("bad\x1b[2J");
  CHECK_THAT(std::string(ValidateDrainRequest(drain).message()),
             Catch::Contains("reason (--reason)"));
  drain.set_reason(std::string(limits::kMaxReasonBytes + 1, 'r'));
  CHECK_THAT(std::string(ValidateDrainRequest(drain).message()),
             Catch::Contains("the limit is 1024"));
  drain.set_reason("ok");
  drain.add_nodes("node\n02");
  CHECK_THAT(std::string(ValidateDrainRequest(drain).message()),
             Catch::Contains("nodes"));

  v1::ReportProgressRequest progress;
  progress.set_step(-1);
  progress.set_checkpoint_path("/ck/step-100");
  CHECK(ValidateReportProgressRequest(progress).ok());
  progress.set_checkpoint_path("/ck/\x1b]0;x\x07");
  CHECK_THAT(std::string(ValidateReportProgressRequest(progress).message()),
             Catch::Contains("checkpoint_path"));
  progress.set_checkpoint_path("/ck");
  progress.set_step(-2);
  CHECK_THAT(std::string(ValidateReportProgressRequest(progress).message()),
             Catch::Contains("step is -2"));

  v1::ImportTopologyRequest topology;
  topology.set_text("SwitchName=s1 Nodes=node[01-04]\r\n\tSwitchName=s0\n");
  topology.set_source("topology.conf");
  CHECK(ValidateImportTopologyRequest(topology).ok());
  topology.set_text("SwitchName=s1\x1b[2J Nodes=node01\n");
  CHECK_THAT(std::string(ValidateImportTopologyRequest(topology).message()),
             Catch::Contains("the topology file"));

  CHECK(ValidateClaimedUser("alice").ok());
  CHECK_FALSE(ValidateClaimedUser("root\n").ok());
}

TEST_CASE("LaunchStep: argv may hold newlines, not NUL, numbers bounded") {
  v1::LaunchStepRequest step;
  step.add_argv("bash");
  step.add_argv("-c");
  step.add_argv("echo a\necho b");
  step.set_working_dir("/home/alice");
  step.set_ntasks(16);
  CHECK(ValidateLaunchStepRequestFields(step).ok());

  v1::LaunchStepRequest nul = step;
  nul.set_argv(0, "ba\0sh"s);
  CHECK_THAT(std::string(ValidateLaunchStepRequestFields(nul).message()),
             Catch::Contains("NUL"));

  struct NumberCase {
    const char* field;
    std::function<void(v1::LaunchStepRequest&)> change;
  };
  const NumberCase numbers[] = {
      {"nodes", [](auto& r) { r.set_nodes(kU32Max); }},
      {"ntasks", [](auto& r) { r.set_ntasks(kU32Max); }},
      {"ntasks_per_node", [](auto& r) { r.set_ntasks_per_node(kU32Max); }},
      {"cpus_per_task", [](auto& r) { r.set_cpus_per_task(kU32Max); }},
      {"gpus_per_task", [](auto& r) { r.set_gpus_per_task(kU32Max); }},
      {"wait_seconds", [](auto& r) { r.set_wait_seconds(kU32Max); }},
      {"io_port", [](auto& r) { r.set_io_port(70000); }},
      {"working_dir", [](auto& r) { r.set_working_dir("/\x1b"); }},
      {"nodelist", [](auto& r) { r.add_nodelist("n\x1b"); }},
      {"caller_node", [](auto& r) { r.set_caller_node("n\n"); }},
  };
  for (const NumberCase& c : numbers) {
    INFO(c.field);
    v1::LaunchStepRequest changed = step;
    c.change(changed);
    const absl::Status status = ValidateLaunchStepRequestFields(changed);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(status.message()), Catch::Contains(c.field));
  }
}

}  // namespace request_validation_test
}  // namespace gantry
