#include "cli/queue_command.h"

#include <iostream>
#include <set>

#include "absl/strings/str_join.h"
#include "cli/command_support.h"
#include "cli/controller_client.h"
#include "cli/job_selector.h"
#include "cli/output_format.h"
#include "cli/printable_records.h"
#include "cli/slurm/slurm_words.h"
#include "cli/slurm/squeue_format.h"

namespace gantry::cli {

namespace {

template <typename T>
bool Allowed(const std::set<T>& allowed, const T& value) {
  return allowed.empty() || allowed.count(value) > 0;
}

}  // namespace

int RunQueueCommand(const std::string& controller,
                    const QueueOptions& options) {
  absl::StatusOr<std::vector<JobSelector>> ids =
      ParseJobSelectors(options.job_ids);
  if (!ids.ok()) return Fail("queue", ids.status());
  std::set<v1::JobState> states;
  if (!options.states.empty()) {
    absl::StatusOr<std::set<v1::JobState>> parsed =
        ParseJobStates(absl::StrJoin(options.states, ","));
    if (!parsed.ok()) return Fail("queue", parsed.status());
    states = *std::move(parsed);
  }
  absl::StatusOr<SqueueFormat> format = SqueueFormat::Parse(
      options.format.empty() ? kSqueueDefaultFormat : options.format);
  if (!format.ok()) return Fail("queue", format.status());
  const std::vector<std::string> user_list = SplitLists(options.users);
  const std::set<std::string> users(user_list.begin(), user_list.end());
  const std::vector<std::string> partition_list =
      SplitLists(options.partitions);
  const std::set<std::string> partitions(partition_list.begin(),
                                         partition_list.end());

  ControllerClient client(ResolveControllerTarget(controller));
  v1::ListJobsRequest request;
  // Finished jobs only when asked for: -a, a finished state, or job ids.
  bool finished = options.all || !ids->empty();
  for (v1::JobState state : states) finished = finished || IsFinished(state);
  request.set_all(finished);
  v1::JobFilter& filter = *request.mutable_filter();
  AddAll(users, *filter.mutable_users());
  AddAll(partitions, *filter.mutable_partitions());
  for (v1::JobState state : states) filter.add_states(state);
  AddSelectors(*ids, filter);
  std::vector<v1::JobRecord> listed;
  if (absl::Status status = client.ListAllJobs(request, listed); !status.ok()) {
    return Fail("queue", status);
  }
  for (v1::JobRecord& job : listed) {
    MakePrintable(job,
                  options.json ? OutputKind::kJson : OutputKind::kTerminal);
  }
  std::vector<const v1::JobRecord*> jobs;
  for (const v1::JobRecord& job : listed) {
    if (Selected(*ids, job) && Allowed(users, job.user()) &&
        Allowed(partitions, job.spec().partition()) &&
        Allowed(states, job.state())) {
      jobs.push_back(&job);
    }
  }
  const int64_t now = NowMs();
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const v1::JobRecord* job : jobs) list.push_back(JobToJson(*job, now));
    std::cout << nlohmann::json{{"jobs", list}}.dump(2) << "\n";
    return 0;
  }
  if (!options.no_header) std::cout << format->Header();
  if (options.array_unfolded) {
    for (const v1::JobRecord* job : jobs) std::cout << format->Row(*job, now);
    return 0;
  }
  for (const SqueueLine& line : FoldPendingArrayTasks(jobs)) {
    std::cout << format->Row(*line.job, now, line.folded_tasks);
  }
  return 0;
}

}  // namespace gantry::cli
