#include "cli/commands/scontrol_command.h"

#include <unistd.h>
#include <memory>

#include <ctime>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/client/job_selector.h"
#include "cli/slurm/scontrol_records.h"
#include "cli/slurm/scontrol_update.h"
#include "cli/version.h"
#include "cli/views/output_format.h"
#include "cli/views/printable_records.h"
#include "common/hostlist.h"

namespace gantry::cli {
namespace {

// What the subcommands parse into; must outlive the parse.
struct ScontrolSubcommands {
  CLI::App* requeue = nullptr;
  CLI::App* update = nullptr;
  CLI::App* ping = nullptr;
  CLI::App* partitions = nullptr;
  CLI::App* config = nullptr;
  CLI::App* version = nullptr;
  std::vector<std::string> words;  // job ids or assignments
  std::string partition;
  bool hold = false;
  bool one_line = false;
  bool slurm = false;
};

// Prints one error line per refused job; 1 if any was refused.
int Report(
    const char* command,
    const google::protobuf::RepeatedPtrField<v1::CancelResult>& results) {
  int code = 0;
  for (const v1::CancelResult& result : results) {
    if (!result.ok()) {
      std::cerr << "gantry " << command << ": error: " << result.error()
                << "\n";
      code = 1;
    }
  }
  return code;
}

int Requeue(const std::string& controller,
            const ScontrolSubcommands& commands) {
  absl::StatusOr<std::vector<JobSelector>> selectors =
      ParseJobSelectors(commands.words);
  if (!selectors.ok()) return Fail("requeue", selectors.status());
  v1::RequeueRequest request;
  request.set_user(CurrentUser());
  request.set_hold(commands.hold);
  AddSelectors(*selectors, *request.mutable_filter());
  ControllerClient client(ResolveControllerTarget(controller));
  v1::RequeueResponse response;
  if (absl::Status status = client.Requeue(request, response); !status.ok()) {
    return Fail("requeue", status);
  }
  return Report("requeue", response.results());
}

int UpdateNodes(ControllerClient& client, const ScontrolUpdate& update) {
  v1::DrainRequest request;
  for (const std::string& node : update.nodes) request.add_nodes(node);
  request.set_reason(update.reason);
  request.set_resume(!update.drain);
  request.set_user(CurrentUser());
  v1::DrainResponse response;
  if (absl::Status status = client.Drain(request, response); !status.ok()) {
    return Fail("update", status);
  }
  return 0;
}

int Update(const std::string& controller, const ScontrolSubcommands& commands) {
  absl::StatusOr<ScontrolUpdate> update = ParseScontrolUpdate(commands.words);
  if (!update.ok()) return Fail("update", update.status());
  for (const std::string& note : update->notes) {
    std::cerr << "gantry update: note: " << note << "\n";
  }
  ControllerClient client(ResolveControllerTarget(controller));
  if (update->entity == ScontrolUpdate::Entity::kNode) {
    return UpdateNodes(client, *update);
  }
  absl::StatusOr<std::vector<JobSelector>> selectors =
      ParseJobSelectors(update->job_ids);
  if (!selectors.ok()) return Fail("update", selectors.status());
  v1::UpdateJobRequest request;
  request.set_user(CurrentUser());
  AddSelectors(*selectors, *request.mutable_filter());
  if (update->partition) request.set_partition(*update->partition);
  if (update->name) request.set_name(*update->name);
  if (update->gpus_per_node) {
    request.set_gpus_per_node(*update->gpus_per_node);
    request.set_gpu_type(update->gpu_type);
  }
  if (update->time_limit_seconds && update->time_limit_delta == 0) {
    request.set_time_limit_seconds(*update->time_limit_seconds);
  }
  int code = 0;
  if (update->time_limit_delta != 0) {
    // +N / -N: relative to each job's own limit, so one request per job.
    if (selectors->size() != 1 || selectors->front().task.has_value()) {
      std::cerr << "gantry update: error: TimeLimit=+/-N takes one job id\n";
      return 1;
    }
    v1::GetJobRequest get;
    get.set_job_id(selectors->front().id);
    v1::GetJobResponse job;
    if (absl::Status status = client.GetJob(get, job); !status.ok()) {
      return Fail("update", status);
    }
    const int64_t current =
        static_cast<int64_t>(job.job().spec().time_limit_seconds());
    if (current == 0) {
      std::cerr << "gantry update: error: job " << get.job_id()
                << " has no time limit to change by "
                << update->time_limit_delta * 1 << "\n";
      return 1;
    }
    const int64_t change = static_cast<int64_t>(*update->time_limit_seconds) *
                           update->time_limit_delta;
    if (current + change <= 0) {
      std::cerr << "gantry update: error: the time limit would drop to "
                   "nothing\n";
      return 1;
    }
    request.set_time_limit_seconds(static_cast<uint64_t>(current + change));
  }
  v1::UpdateJobResponse response;
  if (absl::Status status = client.UpdateJob(request, response); !status.ok()) {
    return Fail("update", status);
  }
  code = Report("update", response.results());
  return code;
}

// Where the controller is, as scontrol ping names it: the host of a
// HOST:PORT target, this host for a local socket.
std::string ControllerHost(const std::string& target) {
  if (target.rfind("unix", 0) != 0) {
    std::string host = target.substr(0, target.rfind(':'));
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    return host;
  }
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

int Ping(const std::string& controller) {
  const std::string target = ResolveControllerTarget(controller);
  ControllerClient client(target);
  v1::ListNodesResponse response;
  const absl::Status status = client.ListNodes(response);
  // A refusal still proves gantryd answers.
  const bool up =
      status.ok() || status.code() != absl::StatusCode::kUnavailable;
  std::cout << "Slurmctld(primary) at " << ControllerHost(target) << " is "
            << (up ? "UP" : "DOWN") << "\n";
  return up ? 0 : 1;
}

int Partitions(const std::string& controller,
               const ScontrolSubcommands& commands) {
  ControllerClient client(ResolveControllerTarget(controller));
  v1::ListNodesResponse response;
  if (absl::Status status = client.ListNodes(response); !status.ok()) {
    return Fail("partitions", status);
  }
  MakePrintable(response, OutputKind::kTerminal);
  const std::vector<v1::NodeRecord> nodes(response.nodes().begin(),
                                          response.nodes().end());
  bool first = true;
  for (const v1::PartitionInfo& partition : response.partitions()) {
    if (!commands.partition.empty() && partition.name() != commands.partition) {
      continue;
    }
    const std::string record = ScontrolPartitionRecord(partition, nodes);
    if (commands.one_line) {
      std::cout << OneLine(record);
    } else {
      std::cout << (first ? "" : "\n") << record;
    }
    first = false;
  }
  if (first && !commands.partition.empty()) {
    std::cerr << "gantry partitions: error: Partition " << commands.partition
              << " not found\n";
    return 1;
  }
  return 0;
}

int Config(const std::string& controller) {
  const std::string target = ResolveControllerTarget(controller);
  // The name is the controller's (gantryd --cluster-name).
  ControllerClient client(target);
  v1::ClusterStatusResponse status;
  if (absl::Status asked = client.ClusterStatus(status); !asked.ok()) {
    return Fail("config", asked);
  }
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &local);
  std::cout << "Configuration data as of " << stamp << "\n";
  for (const auto& [key, value] : {std::pair<std::string, std::string>{
                                       "ClusterName", status.cluster_name()},
                                   {"SlurmctldHost[0]", ControllerHost(target)},
                                   {"SlurmctldAddr", target},
                                   {"SLURM_VERSION", kSlurmVersion},
                                   {"GANTRY_VERSION", GANTRY_VERSION}}) {
    std::cout << absl::StrFormat("%-23s = %s\n", key, value);
  }
  return 0;
}

void AddScontrolSubcommands(CLI::App& app, ScontrolSubcommands& commands) {
  commands.requeue = app.add_subcommand(
      "requeue",
      "Run jobs again: a running one is stopped and goes back to pending, a "
      "finished one goes back at once (scontrol requeue)");
  commands.requeue->add_option("JOBID", commands.words, "Job ids")->required();
  commands.requeue->add_flag("--hold", commands.hold,
                             "Held once pending (scontrol requeuehold)");
  commands.update = app.add_subcommand(
      "update",
      "Change a job (JobId=ID TimeLimit=T Partition=P JobName=N "
      "Gres=gpu:TYPE:N; only admins raise a time limit) or, for admins, nodes "
      "(NodeName=N "
      "State=DRAIN|RESUME Reason=...) (scontrol update)");
  commands.update->add_option("KEY=VALUE", commands.words, "Assignments")
      ->required();
  commands.ping =
      app.add_subcommand("ping", "Whether gantryd answers (scontrol ping)");
  commands.partitions = app.add_subcommand(
      "partitions", "Partitions' whole records (scontrol show partition)");
  commands.partitions->add_option("NAME", commands.partition,
                                  "Only this partition");
  commands.partitions->add_flag("-o,--oneliner", commands.one_line,
                                "Each record on one line");
  commands.config = app.add_subcommand(
      "config", "The controller's address and versions (scontrol show config)");
  commands.version = app.add_subcommand(
      "version", "Gantry's version; --slurm: as scontrol version prints it");
  commands.version->add_flag("--slurm", commands.slurm, kSlurmVersionLine);
}

std::optional<int> RunScontrolSubcommands(const std::string& controller,
                                          const ScontrolSubcommands& commands) {
  if (commands.requeue->parsed()) return Requeue(controller, commands);
  if (commands.update->parsed()) return Update(controller, commands);
  if (commands.ping->parsed()) return Ping(controller);
  if (commands.partitions->parsed()) return Partitions(controller, commands);
  if (commands.config->parsed()) return Config(controller);
  if (commands.version->parsed()) {
    if (commands.slurm) {
      std::cout << kSlurmVersionLine << "\n";
    } else {
      std::cout << kVersionLine << "\n";
    }
    return 0;
  }
  return std::nullopt;
}

}  // namespace

void AddScontrolCommands(CommandTable& commands) {
  auto parsed = std::make_shared<ScontrolSubcommands>();
  AddScontrolSubcommands(commands.app(), *parsed);
  for (CLI::App* subcommand :
       {parsed->requeue, parsed->update, parsed->ping, parsed->partitions,
        parsed->config, parsed->version}) {
    commands.Add(subcommand, [parsed](const std::string& controller) {
      return *RunScontrolSubcommands(controller, *parsed);
    });
  }
}

}  // namespace gantry::cli
