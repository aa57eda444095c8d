#include "cli/cancel_command.h"

#include <iostream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_support.h"
#include "cli/controller_client.h"
#include "cli/job_selector.h"
#include "cli/slurm/slurm_words.h"
#include "common/signal_name.h"

namespace gantry::cli {

int RunCancelCommand(const std::string& controller,
                     const CancelOptions& options) {
  absl::StatusOr<std::vector<JobSelector>> ids =
      ParseJobSelectors(options.job_ids);
  if (!ids.ok()) return Fail("cancel", ids.status());
  int signal = 0;
  if (!options.signal.empty()) {
    absl::StatusOr<int> parsed = ParseSignal(options.signal);
    if (!parsed.ok()) return Fail("cancel", parsed.status());
    signal = *parsed;
  }
  if ((options.batch || options.full) && signal == 0) {
    std::cerr << "gantry cancel: error: -b/--batch and -f/--full say where "
                 "a --signal goes; give --signal too\n";
    return 1;
  }
  if (options.batch && options.full) {
    std::cerr << "gantry cancel: error: -b/--batch and -f/--full exclude "
                 "each other\n";
    return 1;
  }
  std::set<v1::JobState> states;
  if (!options.states.empty()) {
    absl::StatusOr<std::set<v1::JobState>> parsed =
        ParseJobStates(absl::StrJoin(options.states, ","));
    if (!parsed.ok()) return Fail("cancel", parsed.status());
    states = *std::move(parsed);
  }
  const std::vector<std::string> user_list = SplitLists(options.users);
  std::set<std::string> users(user_list.begin(), user_list.end());
  const std::vector<std::string> name_list = SplitLists(options.names);
  const std::set<std::string> names(name_list.begin(), name_list.end());
  const bool filtered = !users.empty() || !names.empty() || !states.empty();
  if (ids->empty() && !filtered) {
    std::cerr << "gantry cancel: error: no job given: name job ids, or "
                 "select jobs with -u USER, -n NAME or -t STATE (all of "
                 "yours: gantry cancel -u "
              << CurrentUser() << ")\n";
    return 1;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  v1::CancelRequest request;
  request.set_user(CurrentUser());
  request.set_signal(signal);
  request.set_signal_target(options.batch
                                ? v1::CancelRequest::SIGNAL_BATCH_SCRIPT
                            : options.full ? v1::CancelRequest::SIGNAL_FULL
                                           : v1::CancelRequest::SIGNAL_STEPS);
  // The controller resolves the selection (CancelRequest.filter): an
  // array's id stands for its pending and running tasks; with -u, -n or
  // -t, the pending and running jobs matching all of them (none matching
  // is no error for scancel).
  v1::JobFilter& filter = *request.mutable_filter();
  AddSelectors(*ids, filter);
  if (filtered) {
    // With no ids, the caller's own jobs unless -u says whose; the
    // controller still refuses jobs the caller may not manage.
    if (ids->empty() && users.empty()) users.insert(CurrentUser());
    AddAll(users, *filter.mutable_users());
    AddAll(names, *filter.mutable_names());
    for (v1::JobState state : states) filter.add_states(state);
  }
  v1::CancelResponse response;
  if (absl::Status status = client.Cancel(request, response); !status.ok()) {
    return Fail("cancel", status);
  }
  int code = 0;
  for (const v1::CancelResult& result : response.results()) {
    if (!result.ok()) {
      std::cerr << "gantry cancel: error: " << (signal ? "Signal" : "Kill")
                << " job error on job id "
                << (result.selector().empty() ? absl::StrCat(result.job_id())
                                              : result.selector())
                << ": " << result.error() << "\n";
      code = 1;
    }
  }
  return code;
}

}  // namespace gantry::cli
