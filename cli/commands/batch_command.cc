#include "cli/commands/batch_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/slurm/slurm_words.h"
#include "cli/version.h"
#include "common/begin_time.h"
#include "common/dataset_spec.h"
#include "common/derived_resources.h"
#include "common/export_environment.h"
#include "common/export_file.h"
#include "common/job_options.h"
#include "common/sbatch_environment.h"

extern char** environ;

namespace gantry::cli {
namespace {

// sbatch --wait: polls until the job has ended; its exit code (128 +
// signal when a signal ended it; 1 for an end without one, such as a
// cancel or a node failure).
int WaitForJob(ControllerClient& client, uint64_t job_id) {
  auto delay = std::chrono::milliseconds(100);
  while (true) {
    v1::GetJobResponse job;
    absl::Status status = client.GetJob(job_id, job);
    if (!status.ok() && !absl::IsUnavailable(status)) {
      std::cerr << "gantry batch: error: waiting for job " << job_id << ": "
                << status.message() << "\n";
      return 1;
    }
    if (status.ok() && IsFinished(job.job().state())) {
      const v1::JobRecord& record = job.job();
      if (record.state() == v1::COMPLETED) return 0;
      if (record.exit_signal() != 0) return 128 + record.exit_signal();
      return record.exit_code() != 0 ? record.exit_code() : 1;
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(2000));
  }
}

// Variables Slurm sets in a job's environment from how it was submitted;
// the controller's rank environment adds those it decides (placement).
void AddSubmissionVariables(const JobRequest& request,
                            std::map<std::string, std::string>& environment) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') {
    environment["SLURM_SUBMIT_HOST"] = host;
  }
  if (!request.export_spec.empty()) {
    environment["SLURM_EXPORT_ENV"] = request.export_spec;
  }
  if (request.gpus) environment["SLURM_GPUS"] = absl::StrCat(*request.gpus);
  if (request.gpus_per_task) {
    environment["SLURM_GPUS_PER_TASK"] = absl::StrCat(*request.gpus_per_task);
  }
  if (request.ntasks_per_gpu) {
    // srun inside the job reads it back (cli/commands/run_command.cc) to give
    // each task its own GPU.
    environment["SLURM_NTASKS_PER_GPU"] = absl::StrCat(*request.ntasks_per_gpu);
  }
  if (request.mem_per_cpu_mb) {
    environment["SLURM_MEM_PER_CPU"] = absl::StrCat(*request.mem_per_cpu_mb);
  }
}

// A --begin or --deadline value at `now_ms`, in ms since the epoch.
absl::StatusOr<int64_t> TimeMs(const std::string& text, int64_t now_ms) {
  absl::StatusOr<int64_t> at = ParseBeginTime(text, now_ms / 1000);
  if (!at.ok()) return at.status();
  // "now+N" counts from this moment, not from the start of its second.
  const bool relative = absl::AsciiStrToLower(text.substr(0, 3)) == "now";
  return relative ? now_ms + (*at - now_ms / 1000) * 1000 : *at * 1000;
}

}  // namespace

absl::StatusOr<std::string> DatasetPathForSpec(
    const DatasetDeclaration& dataset, const std::string& working_dir) {
  std::filesystem::path path(dataset.path);
  if (path.is_relative()) path = working_dir / path;
  std::string normal = path.lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  if (absl::Status status = CheckDatasetPath(normal); !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dataset ", dataset.name, ": ", status.message()));
  }
  std::error_code error;
  if (!std::filesystem::is_directory(normal, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dataset ", dataset.name, ": ", normal,
                     " does not exist or is not a directory"));
  }
  return normal;
}

std::string WrapCommand(const std::string& command) {
  return absl::StrCat(
      "#!/bin/sh\n# This script was created by gantry batch "
      "--wrap.\n\n",
      command, "\n");
}

absl::StatusOr<BatchInvocation> SplitBatchArguments(
    const std::vector<std::string>& args) {
  BatchInvocation invocation;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (word.empty() || word[0] != '-' || word == "-") break;
    invocation.option_words.push_back(word);
    if (OptionTakesNextWord(word) && i + 1 < args.size()) {
      invocation.option_words.push_back(args[++i]);
    }
  }
  if (i < args.size()) {
    invocation.script_path = args[i++];
    for (; i < args.size(); ++i) invocation.script_args.push_back(args[i]);
  }
  return invocation;
}

absl::StatusOr<v1::SubmitRequest> BuildSubmitRequest(
    JobRequest& request, const std::string& script,
    const std::vector<std::string>& script_args, const std::string& submit_dir,
    char** environ_entries) {
  if (script.rfind("#!", 0) != 0) {
    return absl::InvalidArgumentError(
        "this does not look like a batch script: the first line must start "
        "with #! followed by the path to an interpreter");
  }
  if (absl::Status derived = ResolveDerivedResources(request); !derived.ok()) {
    return derived;
  }
  if (request.no_requeue && !request.max_restarts) request.max_restarts = 0;
  v1::SubmitRequest submit;
  v1::JobSpec& spec = *submit.mutable_spec();
  spec.set_name(request.job_name);
  spec.set_nodes(request.nodes.value_or(0));
  spec.set_min_nodes(request.min_nodes.value_or(0));
  spec.set_elastic(request.elastic);
  spec.set_memory_checkpoints(request.memory_checkpoints);
  spec.set_ntasks(request.ntasks.value_or(0));
  spec.set_ntasks_per_node(request.ntasks_per_node.value_or(0));
  spec.set_cpus_per_task(request.cpus_per_task.value_or(1));
  spec.set_gpus_per_node(request.gpus_per_node.value_or(0));
  spec.set_gpus(request.gpus.value_or(0));
  if (request.gpus_left_to_controller && request.mem_per_gpu_mb) {
    spec.set_mem_per_gpu_mb(*request.mem_per_gpu_mb);
  }
  spec.set_mem_per_node_mb(request.mem_per_node_mb.value_or(0));
  spec.set_time_limit_seconds(request.time_limit_seconds.value_or(0));
  spec.set_partition(request.partition);
  // Names only; the controller sets SLURM_JOB_ACCOUNT and SLURM_JOB_QOS
  // from them, or from its defaults.
  spec.set_account(request.account);
  spec.set_qos(request.qos);
  spec.set_output_pattern(request.output);
  spec.set_error_pattern(request.error);
  std::filesystem::path working_dir =
      request.chdir.empty() ? std::filesystem::path(submit_dir)
                            : std::filesystem::path(request.chdir);
  if (working_dir.is_relative()) working_dir = submit_dir / working_dir;
  spec.set_working_dir(working_dir.lexically_normal().string());
  spec.set_submit_dir(submit_dir);
  if (!request.checkpoint_dir.empty()) {
    std::filesystem::path checkpoints(request.checkpoint_dir);
    if (checkpoints.is_relative()) checkpoints = working_dir / checkpoints;
    checkpoints = checkpoints.lexically_normal();
    std::error_code error;
    if (!std::filesystem::is_directory(checkpoints, error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--checkpoint-dir ", checkpoints.string(),
                       " does not exist or is not a directory"));
    }
    if (access(checkpoints.c_str(), W_OK | X_OK) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--checkpoint-dir ", checkpoints.string(), " is not writable"));
    }
    spec.set_checkpoint_dir(checkpoints.string());
  }
  if (request.max_restarts) spec.set_max_restarts(*request.max_restarts);
  spec.set_hang_timeout_seconds(request.hang_timeout_seconds.value_or(0));
  if (request.preflight.has_value()) spec.set_preflight(*request.preflight);
  spec.set_exclusive(request.exclusive);
  spec.set_script_once(!request.per_task);
  spec.set_max_switches(request.max_switches.value_or(0));
  spec.set_switches_max_wait_seconds(
      request.switches_max_wait_seconds.value_or(0));
  spec.set_dataset_locality(request.dataset_locality_cache
                                ? v1::DATASET_LOCALITY_CACHE
                                : v1::DATASET_LOCALITY_TOPOLOGY);
  spec.set_dependency(request.dependency);
  spec.set_array(request.array);
  for (const std::string& node : request.nodelist) {
    spec.add_required_nodes(node);
  }
  for (const std::string& node : request.exclude) spec.add_excluded_nodes(node);
  spec.set_constraint(request.constraint);
  spec.set_gpu_type(request.gpu_type);
  spec.set_warning_signal(request.warning_signal);
  spec.set_warning_signal_seconds(request.warning_signal_seconds);
  spec.set_warning_signal_batch_only(request.warning_signal_batch_only);
  spec.set_append_output(request.append_output.value_or(false));
  spec.set_hold(request.hold);
  for (const DatasetDeclaration& dataset : request.datasets) {
    absl::StatusOr<std::string> path =
        DatasetPathForSpec(dataset, working_dir.string());
    if (!path.ok()) return path.status();
    v1::DatasetRef& ref = *spec.add_datasets();
    ref.set_name(dataset.name);
    ref.set_path(*path);
    if (dataset.version_by_content) {
      ref.set_version_by(v1::DATASET_VERSION_BY_CONTENT);
    }
  }
  spec.set_script(script);
  for (const std::string& arg : script_args) spec.add_script_args(arg);
  std::map<std::string, std::string> environment;
  for (char** entry = environ_entries; entry && *entry; ++entry) {
    std::string_view text(*entry);
    size_t equals = text.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    environment[std::string(text.substr(0, equals))] =
        std::string(text.substr(equals + 1));
  }
  absl::StatusOr<std::map<std::string, std::string>> exported =
      ExportedEnvironment(request.export_spec, environment);
  if (!exported.ok()) return exported.status();
  if (!request.export_file.empty()) {
    // As sbatch: the file's variables over what --export gave.
    absl::StatusOr<std::map<std::string, std::string>> from_file =
        ReadExportFile(request.export_file);
    if (!from_file.ok()) return from_file.status();
    for (auto& [name, value] : *from_file) {
      (*exported)[name] = std::move(value);
    }
  }
  AddSubmissionVariables(request, *exported);
  spec.mutable_environment()->insert(exported->begin(), exported->end());
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  if (!request.begin.empty()) {
    absl::StatusOr<int64_t> begin = TimeMs(request.begin, now_ms);
    if (!begin.ok()) return begin.status();
    spec.set_begin_time_ms(*begin);
  }
  if (!request.deadline.empty()) {
    absl::StatusOr<int64_t> deadline = TimeMs(request.deadline, now_ms);
    if (!deadline.ok()) return deadline.status();
    spec.set_deadline_ms(*deadline);
  }
  const uid_t uid = getuid();
  submit.set_uid(uid);
  submit.set_gid(getgid());
  submit.set_user(CurrentUser());
  return submit;
}

absl::Status PrepareBatch(const std::vector<std::string>& args,
                          bool allow_stdin, PreparedBatch& prepared) {
  absl::StatusOr<BatchInvocation> invocation = SplitBatchArguments(args);
  if (!invocation.ok()) return invocation.status();
  // --wrap decides where the script comes from, so the command line is
  // read once on its own first (and again below, over the directives).
  JobRequest command_line;
  if (absl::Status status = ApplyJobOptions(invocation->option_words,
                                            "command line", command_line);
      !status.ok()) {
    return status;
  }
  if (command_line.version) {  // sbatch -V: scripts probe with it
    prepared.job.version = true;
    return absl::OkStatus();
  }
  std::string script;
  if (!command_line.wrap.empty()) {
    if (!invocation->script_path.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--wrap is the script: give no script file or "
                       "arguments with it (got ",
                       invocation->script_path, ")"));
    }
    script = WrapCommand(command_line.wrap);
  } else if (invocation->script_path.empty()) {
    if (!allow_stdin) {
      return absl::InvalidArgumentError(
          "no batch script given (name a file, or use --wrap)");
    }
    if (isatty(STDIN_FILENO)) {
      return absl::InvalidArgumentError(
          "no batch script given (name a file, or pipe one on standard "
          "input)");
    }
    std::stringstream buffer;
    buffer << std::cin.rdbuf();
    script = buffer.str();
  } else {
    std::ifstream in(invocation->script_path, std::ios::binary);
    if (!in) {
      return absl::InvalidArgumentError(
          absl::StrCat("unable to open file ", invocation->script_path));
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    script = buffer.str();
  }
  // Slurm's precedence: directives, then SBATCH_* variables, then the
  // command line, each over the one before.
  JobRequest& request = prepared.job;
  absl::Status status = ApplyScriptDirectives(script, request);
  for (const EnvironmentOption& option : SbatchEnvironmentOptions(
           [](const char* name) -> const char* { return std::getenv(name); })) {
    if (!status.ok()) break;
    status = ApplyJobOptions(
        option.words, absl::StrCat("environment ", option.variable), request);
  }
  if (status.ok()) {
    status = ApplyJobOptions(invocation->option_words, "command line", request);
  }
  if (!status.ok()) return status;
  if (request.job_name.empty()) {
    // As sbatch: the script's file name, "wrap" for --wrap, or "sbatch"
    // for standard input.
    request.job_name = !request.wrap.empty() ? "wrap"
                       : invocation->script_path.empty()
                           ? "sbatch"
                           : std::filesystem::path(invocation->script_path)
                                 .filename()
                                 .string();
  }
  std::error_code error;
  std::string submit_dir = std::filesystem::current_path(error).string();
  absl::StatusOr<v1::SubmitRequest> submit = BuildSubmitRequest(
      request, script, invocation->script_args, submit_dir, environ);
  if (!submit.ok()) return submit.status();
  if (!invocation->script_path.empty()) {
    // Slurm's Command: where the script was, as squeue %o and scontrol
    // show job report it.
    submit->mutable_spec()->set_script_path(
        std::filesystem::absolute(invocation->script_path, error)
            .lexically_normal()
            .string());
  }
  submit->set_validate_only(request.test_only);
  prepared.submit = *std::move(submit);
  return absl::OkStatus();
}

int RunBatchCommand(const std::vector<std::string>& args,
                    const std::string& controller_flag) {
  PreparedBatch prepared;
  const absl::Status prepared_status =
      PrepareBatch(args, /*allow_stdin=*/true, prepared);
  if (prepared_status.ok() && prepared.job.version) {
    std::cout << kVersionLine << "\n";
    return 0;
  }
  for (const std::string& warning : prepared.job.warnings) {
    if (prepared.job.quiet) break;
    std::cerr << "gantry batch: warning: " << warning << "\n";
  }
  if (!prepared_status.ok()) {
    std::cerr << "gantry batch: error: " << prepared_status.message() << "\n";
    return 1;
  }
  const JobRequest& request = prepared.job;
  const v1::SubmitRequest* const submit = &prepared.submit;
  ControllerClient client(ResolveControllerTarget(controller_flag));
  v1::SubmitResponse response;
  absl::Status status = client.Submit(*submit, response);
  if (IsOutcomeUnknown(status)) {
    // Not "failed": the job may exist and run (controller_client.h).
    std::cerr << "gantry batch: error: Batch job submission outcome unknown: "
              << status.message() << "\n";
    return 1;
  }
  if (!status.ok()) {
    std::cerr << "gantry batch: error: Batch job submission failed: "
              << status.message() << "\n";
    return 1;
  }
  if (request.test_only) {
    const v1::JobSpec& spec = submit->spec();
    std::cerr << "gantry batch: the controller would accept this job ("
              << (spec.min_nodes() > 0 ? absl::StrCat(spec.min_nodes(), "-")
                                       : std::string())
              << std::max<uint32_t>(spec.nodes(), 1) << " node(s)"
              << (spec.partition().empty() ? std::string(", default partition")
                                           : ", partition " + spec.partition())
              << "); nothing was submitted (--test-only)\n";
    return 0;
  }
  if (request.parsable) {
    std::cout << response.job_id() << "\n";
  } else {
    std::cout << "Submitted batch job " << response.job_id() << "\n";
  }
  if (request.wait) return WaitForJob(client, response.job_id());
  return 0;
}

const char kBatchHelp[] = R"(Usage: gantry batch [OPTIONS] SCRIPT [ARGS...]
       gantry batch [OPTIONS] --wrap COMMAND

Submit a batch script, as sbatch does. Options come from #SBATCH (or #GANTRY)
lines at the top of the script and from the command line; the command line
wins. Prints "Submitted batch job ID" (or only ID with --parsable). When the
controller does not answer, the submission is asked again with the same
token (never making a second job) for up to 2 minutes; after that it says
"Batch job submission outcome unknown" with the token to look for in
`gantry queue --me --all --json`, never "failed".

The script runs once, on the first node of the allocation, as sbatch runs
it; `gantry run` (srun) inside it starts tasks across all the job's nodes.
With --per-task the script itself is every task instead (once per task on
every node). Either way it gets the Slurm variables (SLURM_JOB_ID,
SLURM_PROCID, SLURM_JOB_NODELIST, ...), the PyTorch launcher's (MASTER_ADDR,
MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK) and Gantry's own (GANTRY_*).

Options:
  -J, --job-name NAME         name of the job
  -N, --nodes N               number of nodes (gang: all start together);
                              a range MIN-MAX starts on as many as are free
                              up to MAX, and after a lost node with no
                              replacement restarts on fewer, down to MIN
      --elastic               with a range: the job takes a new size at any
                              time (torchrun elastic), so it is restarted
                              onto MAX nodes as soon as they are free (at
                              its next checkpoint, if it reports them)
  -n, --ntasks N              total number of tasks
      --ntasks-per-node N     tasks on each node
  -c, --cpus-per-task N       CPUs for each task
      --gpus-per-node [TYPE:]N  GPUs on each node (also --gres=gpu[:TYPE]:N);
                              TYPE (a100, h100, ...) picks nodes whose GPU
                              model names it or with that feature
  -G, --gpus [TYPE:]N         GPUs for the whole job (SLURM_GPUS); without
                              -N, as few nodes as the partition's GPU nodes
                              hold them on (-G 8 on 4-GPU nodes: 2); spread
                              evenly, rounded up where N does not divide
      --gpus-per-task N       GPUs for each task
      --ntasks-per-gpu N      N tasks for every GPU (-n = N x --gpus); with
                              N=1 srun gives each task its own GPU
      --mem SIZE              memory per node (K, M, G, T suffix; default M);
                              0: all of it (whole nodes)
      --mem-per-cpu SIZE      memory per CPU (exclusive with --mem)
      --mem-per-gpu SIZE      memory per GPU (exclusive with --mem)
  -t, --time TIME             time limit: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S
  -p, --partition NAME        partition to run in
  -w, --nodelist HOSTLIST     nodes the job must get, all of them (node[01-04]);
                              --nodes is raised to their number if below it
  -x, --exclude HOSTLIST      nodes the job must not use
  -C, --constraint EXPR       node features, as the agents declare them: a100,
                              a100&ib, a100|h100, (a|b)&c, [rack1|rack2] (all
                              nodes with the same one of these)
  -o, --output PATTERN        stdout file (%j job id, %x job name, %u user,
                              %A array job id, %a array task index)
  -e, --error PATTERN         stderr file (default: with stdout)
      --open-mode MODE        truncate (default) or append: what the first
                              run does to existing output files (a restart
                              appends; --per-task tasks always append)
  -D, --chdir DIR             working directory of the tasks
      --parsable              print only the job id
  -b, --begin TIME            not before TIME: now+N[minutes|hours|days],
                              HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], noon, ...
      --export LIST           the environment the job gets: ALL (default),
                              NONE, or NAME,NAME=value,... (with ALL: added)
      --export-file FILE|FD   NAME=value records (NUL- or newline-separated)
                              read now, set over what --export gives
      --test-only             check the job with the controller, submit nothing
      --deadline TIME         (--begin's forms) a pending job that can no
                              longer end by TIME, or a running one reaching
                              it, ends DEADLINE
  -W, --wait                  return when the job ends, with its exit code
  -H, --hold                  submit held: pending (JobHeldUser) until
                              gantry release ID (scontrol release)
      --wrap COMMAND          the script is COMMAND under #!/bin/sh (command
                              line only; no script file then)
      --no-requeue            no automatic restart, not even after a node
                              fault (--max-restarts=0)
      --per-task              run the script as every task, on every node
                              (no gantry run needed; each task a rank)
      --checkpoint-dir DIR    where the job writes checkpoints; a restart
                              resumes from the latest (GANTRY_RESUME_FROM)
      --memory-checkpoints    each rank may keep snapshots in its node's
                              memory (GANTRY_MEMORY_CHECKPOINT_DIR); each
                              is copied to a node under another switch, and
                              a restart restores the newest one every rank
                              has (GANTRY_RESTORE_STEP) before the ranks
                              start (python3 -m gantry_checkpoint --help)
      --dataset NAME:PATH     a directory on shared storage that each node
                              copies to its local cache before the ranks
                              start; they find the copy in
                              GANTRY_DATASET_<NAME> (NAME: letters, digits,
                              _). Several allowed. NAME,version=content:PATH
                              tells versions apart by the files' content
                              (for rsync -t or tar; reads the whole tree
                              at each stage), not sizes and mtimes
      --max-restarts N        restart up to N times, after the job's own
                              failures too (without it: node faults only,
                              up to the cluster's default, 3)
      --hang-timeout TIME     a job with no progress (checkpoint or
                              `gantry progress`) for this long is restarted
      --preflight[=yes|no]    run the pre-flight gang check (node health,
                              a TCP ring and gloo all-reduce between the
                              nodes, the site's check) before the ranks
                              start, at every attempt; =no skips it (default:
                              the cluster's policy, gantryd --preflight)
      --exclusive             whole nodes: no other job shares them
      --switches N[@WAIT]     at most N leaf switches; after WAIT (a --time
                              value) any placement will do
      --dataset-locality topology|cache
                              for a job with --dataset: topology (default)
                              keeps the narrowest switch span and prefers
                              nodes holding the datasets among equal ones;
                              cache takes the nodes holding the most, even
                              across more switches (--switches still holds)
      --signal [B:]SIG[@SEC]  send SIG (USR1, TERM, 10, ...) SEC seconds
                              (default 60) before the time limit: to the
                              step tasks, or with B: to the batch script
                              alone (to save a checkpoint in time)
  -d, --dependency LIST       start after other jobs: after:ID[+MIN],
                              afterany:ID, afterok:ID, afternotok:ID,
                              singleton; ',' = all of, '?' = any of; an
                              array's id stands for all its tasks
  -a, --array INDICES         a job array: one job per index, e.g. 0-15,
                              1,3,5-7, 0-15:4 (step); %N runs at most N at
                              once (0-99%10). Up to 10000 tasks, indices up
                              to 4000000. Each task gets SLURM_ARRAY_TASK_ID;
                              the default output is gantry-%A_%a.out
  --controller ADDR           gantryd address (before "batch"; or GANTRY_CONTROLLER,
                              or [client] controller in /etc/gantry/gantry.toml)
  --tls-ca FILE               CA of gantryd's TLS certificate (before "batch";
                              or GANTRY_TLS_CA)
  -V, --version               print Gantry's version and exit

--account and --qos are names the job carries (squeue, sacct,
SLURM_JOB_ACCOUNT, SLURM_JOB_QOS); no account or QOS limits apply.
Accepted with a warning, no effect here: --mail-type, --mail-user, --comment, --hint (no CPU binding here), --time-min,
--overcommit, --ntasks-per-core, --reservation, --nice, --propagate,
--get-user-env. Accepted, already so: --requeue, --wait-all-nodes.
)";

}  // namespace gantry::cli
