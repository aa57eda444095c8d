#include "cli/job_command.h"

#include <grp.h>

#include <algorithm>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_support.h"
#include "cli/controller_client.h"
#include "cli/job_selector.h"
#include "cli/output_format.h"
#include "cli/printable_records.h"
#include "common/hostlist.h"

namespace gantry::cli {

namespace {

// Slurm prints "(null)" for an unset value.
std::string OrNull(const std::string& value) {
  return value.empty() ? "(null)" : value;
}

}  // namespace

int RunJobCommand(const std::string& controller, const std::string& job_id,
                  bool json, bool script) {
  const std::optional<JobSelector> selector = ParseJobSelector(job_id);
  if (!selector.has_value()) {
    std::cerr << "gantry job: error: invalid job id \"" << job_id
              << "\" (expected ID or ARRAYID_TASK)\n";
    return 1;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  // An array task is found by the controller, in its live state or its
  // history.
  v1::GetJobRequest request;
  request.set_job_id(selector->id);
  if (selector->task.has_value()) request.set_array_task_id(*selector->task);
  v1::GetJobResponse response;
  if (absl::Status status = client.GetJob(request, response); !status.ok()) {
    return Fail("job", status);
  }
  const uint64_t id = response.job().id();
  if (!script) {
    MakePrintable(response, json ? OutputKind::kJson : OutputKind::kTerminal);
  }
  if (script) {
    // The controller sends scripts only to their owners and admins.
    if (response.job().spec().script().empty()) {
      std::cerr << "gantry job: error: the batch script of job " << id
                << " is shown only to its owner and admins\n";
      return 1;
    }
    std::cout << response.job().spec().script();
    return 0;
  }
  nlohmann::json view = JobToJson(response.job(), NowMs());
  nlohmann::json history = nlohmann::json::array();
  for (const v1::EventRecord& event : response.events())
    history.push_back(EventToJson(event));
  if (json) {
    view["history"] = history;
    std::cout << view.dump(2) << "\n";
    return 0;
  }
  const v1::JobRecord& job = response.job();
  const v1::JobSpec& spec = job.spec();
  // scontrol show job's layout and key names, so scripts that pick fields
  // out of it (JobState=, NodeList=, ...) work unchanged.
  const uint32_t nodes =
      job.allocation_size() > 0 ? job.allocation_size() : spec.nodes();
  uint32_t cpus = 0;
  for (const v1::NodeAllocation& share : job.allocation()) cpus += share.cpus();
  const uint32_t tasks = view["ntasks"].get<uint32_t>();
  const uint32_t cpus_per_task =
      spec.cpus_per_task() ? spec.cpus_per_task() : 1;
  if (cpus == 0) cpus = tasks * cpus_per_task;
  std::string tres = absl::StrCat("cpu=", cpus);
  if (spec.mem_per_node_mb()) {
    absl::StrAppend(&tres, ",mem=", spec.mem_per_node_mb() * nodes, "M");
  }
  absl::StrAppend(&tres, ",node=", nodes);
  if (spec.gpus_per_node()) {
    absl::StrAppend(&tres, ",gres/gpu",
                    spec.gpu_type().empty() ? "" : ":" + spec.gpu_type(), "=",
                    spec.gpus_per_node() * nodes);
  }
  std::string group_name = absl::StrCat(job.gid());
  if (::group* entry = getgrgid(job.gid())) group_name = entry->gr_name;
  const std::string node_list = JobNodeList(job);
  std::cout << "JobId=" << job.id();
  if (job.array_job_id() != 0) {
    std::cout << " ArrayJobId=" << job.array_job_id()
              << " ArrayTaskId=" << job.array_task_id();
  }
  std::cout << " JobName=" << spec.name() << "\n"
            << "   UserId=" << job.user() << "(" << job.uid() << ")"
            << " GroupId=" << group_name << "(" << job.gid() << ")\n"
            << "   JobState=" << StateName(job.state())
            << " Reason=" << (job.reason().empty() ? "None" : job.reason())
            << " Dependency="
            << (spec.dependency().empty() ? "(null)" : spec.dependency())
            << "\n";
  if (!job.reason_detail().empty()) {
    std::cout << "   ReasonDetail=" << job.reason_detail() << "\n";
  }
  std::cout
      << "   Restarts=" << (job.attempt() > 0 ? job.attempt() - 1 : 0)
      << " Attempt=" << job.attempt() << " BatchFlag=1"
      << " ExitCode=" << job.exit_code() << ":" << job.exit_signal() << "\n"
      << "   RunTime=" << FormatDuration(view["elapsed_seconds"].get<int64_t>())
      << " TimeLimit="
      << (spec.time_limit_seconds()
              ? FormatDuration(static_cast<int64_t>(spec.time_limit_seconds()))
              : "UNLIMITED")
      << "\n"
      << "   SubmitTime=" << FormatTime(job.submit_time_ms())
      << " EligibleTime="
      << FormatTime(std::max(job.submit_time_ms(), job.eligible_time_ms()))
      << "\n"
      << "   StartTime=" << FormatTime(job.start_time_ms())
      << " EndTime=" << FormatTime(job.end_time_ms()) << "\n"
      << "   Partition=" << spec.partition() << "\n"
      << "   ReqNodeList="
      << OrNull(CompressHostlist(
             {spec.required_nodes().begin(), spec.required_nodes().end()}))
      << " ExcNodeList="
      << OrNull(CompressHostlist(
             {spec.excluded_nodes().begin(), spec.excluded_nodes().end()}))
      << " Features=" << OrNull(spec.constraint()) << "\n"
      << "   NodeList=" << (node_list.empty() ? "(null)" : node_list)
      << " BatchHost="
      << (job.allocation_size() > 0 ? job.allocation(0).node() : "(null)")
      << "\n"
      << "   NumNodes=" << nodes << " NumCPUs=" << cpus << " NumTasks=" << tasks
      << " CPUs/Task=" << cpus_per_task << " GPUs/Node=" << spec.gpus_per_node()
      << "\n"
      << "   TRES=" << tres << "\n"
      << "   MinMemoryNode="
      << (spec.mem_per_node_mb() ? absl::StrCat(spec.mem_per_node_mb(), "M")
                                 : "0")
      << "\n"
      // The script itself is stored, not its path.
      << "   Command=(batch script: gantry job " << job.id() << " --script)\n"
      << "   WorkDir=" << spec.working_dir() << "\n"
      << "   StdErr="
      << (job.error_path().empty() ? job.output_path() : job.error_path())
      << "\n"
      << "   StdIn=/dev/null\n"
      << "   StdOut=" << job.output_path() << "\n";
  if (!job.spec().checkpoint_dir().empty()) {
    std::cout << "   CheckpointDir=" << job.spec().checkpoint_dir() << "\n";
  }
  if (!job.latest_checkpoint().path().empty()) {
    std::cout << "   LatestCheckpoint=" << job.latest_checkpoint().path()
              << " Step=" << job.latest_checkpoint().step()
              << " Source=" << job.latest_checkpoint().source()
              << " At=" << FormatTime(job.latest_checkpoint().time_ms())
              << "\n";
  }
  if (job.attempts_size() > 0) {
    std::cout << "   Attempts:\n";
    for (const v1::AttemptRecord& attempt : job.attempts()) {
      std::cout << "     #" << attempt.attempt() << "  "
                << absl::StrJoin(attempt.nodes(), ",") << "  "
                << FormatTime(attempt.start_time_ms()) << " -> "
                << (attempt.end_time_ms() ? FormatTime(attempt.end_time_ms())
                                          : "running")
                << (attempt.end_reason().empty() ? ""
                                                 : "  " + attempt.end_reason())
                << (attempt.end_detail().empty()
                        ? ""
                        : " (" + attempt.end_detail() + ")")
                << (attempt.resumed_from().empty()
                        ? ""
                        : "  resumed from " + attempt.resumed_from())
                << "\n";
    }
  }
  if (job.steps_size() > 0) {
    std::cout << "   Steps:\n";
    for (const v1::StepRecord& step : job.steps()) {
      std::cout << "     " << job.id() << "." << step.id() << "  "
                << absl::StrJoin(step.argv(), " ").substr(0, 60) << "  "
                << StepTaskCount(step) << " task(s) on "
                << absl::StrJoin(StepNodeNames(step), ",") << "  "
                << (step.end_time_ms()
                        ? absl::StrCat("ExitCode=", step.exit_code())
                        : std::string("running"))
                << (step.end_detail().empty() ? ""
                                              : " (" + step.end_detail() + ")")
                << "\n";
    }
  }
  if (!history.empty()) {
    std::cout << "   History:\n";
    for (const v1::EventRecord& event : response.events()) {
      std::cout << "     " << FormatTime(event.time_ms()) << "  "
                << event.kind()
                << (event.detail().empty() ? "" : "  " + event.detail())
                << "\n";
    }
  }
  return 0;
}

}  // namespace gantry::cli
