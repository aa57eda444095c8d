// gantry: the command-line client. Parses the command and hands it to the
// command's cli/*_command.cc.
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "cli/accounting_commands.h"
#include "cli/alloc_command.h"
#include "cli/attach_command.h"
#include "cli/batch_command.h"
#include "cli/batch_stream_command.h"
#include "cli/cache_command.h"
#include "cli/cancel_command.h"
#include "cli/client_config.h"
#include "cli/drain_command.h"
#include "cli/handover_command.h"
#include "cli/hold_command.h"
#include "cli/hostlist_command.h"
#include "cli/hostnames_command.h"
#include "cli/job_command.h"
#include "cli/nodes_command.h"
#include "cli/precheck.h"
#include "cli/progress_command.h"
#include "cli/queue_command.h"
#include "cli/run_command.h"
#include "cli/scontrol_command.h"
#include "cli/slurm/scontrol_alias.h"
#include "cli/slurm/slurm_alias.h"
#include "cli/status_command.h"
#include "cli/topology_command.h"
#include "cli/version.h"
#include "common/controller_targets.h"
#include "common/tls_credentials.h"

namespace {

constexpr char kBatchHelp[] = R"(Usage: gantry batch [OPTIONS] SCRIPT [ARGS...]
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

// --tls-ca and --tls-server-name become the environment the controller
// client reads (common/tls_credentials.h), which a submitted job's
// exported environment then carries too.
bool SetTlsVariable(const std::string& word, const char* next, int& consumed) {
  for (const auto& [flag, variable] :
       {std::pair{std::string("--tls-ca"), gantry::kTlsCaVariable},
        std::pair{std::string("--tls-server-name"),
                  gantry::kTlsServerNameVariable}}) {
    if (word == flag && next != nullptr) {
      setenv(variable, next, 1);
      consumed = 2;
      return true;
    }
    if (word.rfind(flag + "=", 0) == 0) {
      setenv(variable, word.substr(flag.size() + 1).c_str(), 1);
      consumed = 1;
      return true;
    }
  }
  return false;
}

// `gantry [--controller ADDR] [--tls-ca FILE] batch|run ARGS...` is routed
// before CLI11 sees it: their arguments follow sbatch's and srun's grammar
// (options, then a script or command and its arguments).
bool RouteBatch(int argc, char** argv, std::string& controller,
                std::string& command, std::vector<std::string>& batch_args) {
  int i = 1;
  while (i < argc) {
    std::string word(argv[i]);
    int consumed = 0;
    if (SetTlsVariable(word, i + 1 < argc ? argv[i + 1] : nullptr, consumed)) {
      i += consumed;
    } else if (word == "--controller" && i + 1 < argc) {
      controller = argv[i + 1];
      i += 2;
    } else if (word.rfind("--controller=", 0) == 0) {
      controller = word.substr(13);
      ++i;
    } else {
      break;
    }
  }
  if (i >= argc) return false;
  command = argv[i];
  batch_args.assign(argv + i + 1, argv + argc);
  return command == "batch" || command == "run";
}

// The name messages go under: the Slurm command this runs as (srun,
// salloc), else "gantry SUBCOMMAND".
std::string ProgramName(const char* argv0, const std::string& subcommand) {
  std::string program = argv0;
  program = program.substr(program.rfind('/') + 1);
  if (program == "srun" || program == "salloc" || program == "sattach") {
    return program;
  }
  return "gantry " + subcommand;
}

int RunCommandLine(int argc, char** argv) {
  const std::string invoked_as = argv[0];
  // Run as sbatch/squeue/scancel/sinfo/scontrol (links from
  // gantry-slurm-compat): rewrite the words to the gantry subcommand before
  // anything parses them.
  std::string invoked = argv[0];
  invoked = invoked.substr(invoked.rfind('/') + 1);
  if (invoked == "scontrol" &&
      gantry::cli::WantsScontrolHelp({argv, argv + argc})) {
    std::cout << gantry::cli::ScontrolUsage();
    return 0;
  }
  std::vector<std::string> alias_notes;
  absl::StatusOr<std::vector<std::string>> expanded =
      gantry::cli::ExpandSlurmAlias({argv, argv + argc}, alias_notes);
  for (const std::string& note : alias_notes) {
    std::cerr << invoked << ": " << note << "\n";
  }
  if (!expanded.ok()) {
    std::string program = argv[0];
    program = program.substr(program.rfind('/') + 1);
    std::cerr << program << ": error: " << expanded.status().message() << "\n";
    return 1;
  }
  // The login host's [client] settings (controller address, TLS), below
  // the environment and the flags.
  if (absl::Status config = gantry::cli::ApplyClientConfig(); !config.ok()) {
    std::string program = argv[0];
    program = program.substr(program.rfind('/') + 1);
    std::cerr << program << ": error: " << config.message() << "\n";
    return 1;
  }
  std::vector<std::string> words = *std::move(expanded);
  std::vector<char*> word_pointers;
  for (std::string& word : words) word_pointers.push_back(word.data());
  word_pointers.push_back(nullptr);
  argc = static_cast<int>(words.size());
  argv = word_pointers.data();
  {
    std::string controller;
    std::string command;
    std::vector<std::string> args;
    if (RouteBatch(argc, argv, controller, command, args) && command == "run") {
      return gantry::cli::RunStepCommand(
          controller, args, ProgramName(invoked_as.c_str(), "run"));
    }
    if (command == "attach") {
      return gantry::cli::RunAttachCommand(
          controller, args, ProgramName(invoked_as.c_str(), "attach"));
    }
    if (command == "alloc") {
      return gantry::cli::RunAllocCommand(
          controller, args, ProgramName(invoked_as.c_str(), "alloc"));
    }
    // sacct, sreport, sprio, sshare, sdiag: Slurm's option grammar.
    if (gantry::cli::IsAccountingCommand(command)) {
      return gantry::cli::RunAccountingCommand(
          command, invoked.rfind("gantry", 0) == 0 ? "gantry" : invoked,
          controller, args);
    }
    if (command == "batch-stream") {
      for (const std::string& arg : args) {
        if (arg == "--help" || arg == "-h") {
          std::cout << gantry::cli::kBatchStreamHelp;
          return 0;
        }
      }
      return gantry::cli::RunBatchStreamCommand(args, controller);
    }
    if (!command.empty() && command == "batch") {
      for (const std::string& arg : args) {
        if (arg == "--help" || arg == "-h") {
          std::cout << kBatchHelp;
          return 0;
        }
        if (!arg.empty() && arg[0] != '-') break;
      }
      return gantry::cli::RunBatchCommand(args, controller);
    }
  }
  CLI::App app{
      "gantry: submit and watch jobs on a Gantry cluster.\n"
      "Slurm users: batch=sbatch, queue=squeue, cancel=scancel, "
      "job=scontrol show job, nodes=sinfo."};
  app.require_subcommand(1);
  app.set_version_flag("--version", gantry::cli::kVersionLine);
  std::string controller;
  app.add_option("--controller", controller,
                 "gantryd address: unix:PATH or HOST:PORT (default: "
                 "$GANTRY_CONTROLLER, else controller in the [client] table "
                 "of /etc/gantry/gantry.toml ($GANTRY_CONFIG), else "
                 "unix:/run/gantry/gantryd.sock)");
  app.add_option_function<std::string>(
         "--tls-ca",
         [](const std::string& path) {
           setenv(gantry::kTlsCaVariable, path.c_str(), 1);
         },
         "CA file (PEM) that signed gantryd's certificate: TLS to a "
         "HOST:PORT controller (default: $GANTRY_TLS_CA; none: plain TCP)")
      ->option_text("FILE");
  app.add_option_function<std::string>(
         "--tls-server-name",
         [](const std::string& name) {
           setenv(gantry::kTlsServerNameVariable, name.c_str(), 1);
         },
         "Name gantryd's certificate must carry, when not the host of "
         "--controller (default: $GANTRY_TLS_SERVER_NAME)")
      ->option_text("NAME");
  app.fallthrough();

  // Only for --help listings: RouteBatch handles the commands themselves.
  app.add_subcommand("batch",
                     "Submit a batch script (sbatch); see gantry batch --help");
  app.add_subcommand("batch-stream",
                     "Submit many batch jobs, one per line of standard "
                     "input, on one connection; see gantry batch-stream "
                     "--help");
  app.add_subcommand("alloc",
                     "Allocate a job and run a shell or command here in it "
                     "(salloc); see gantry alloc --help");
  app.add_subcommand("attach",
                     "Print a running step's output from another terminal "
                     "(sattach); see gantry attach --help");
  app.add_subcommand("run",
                     "Run a command as a job step: inside a job on its "
                     "allocation, outside one on a job allocated for it "
                     "(srun); see gantry run --help");

  app.add_subcommand("acct",
                     "Accounting of running and finished jobs (sacct); see "
                     "gantry acct --help");
  app.add_subcommand("stat", "CPU time and memory of running jobs (sstat)");
  app.add_subcommand("report",
                     "Usage of the cluster over a period, by user (sreport)");
  app.add_subcommand("prio", "Priority factors of pending jobs (sprio)");
  app.add_subcommand("share", "Fair-share usage per user (sshare)");
  app.add_subcommand("diag", "gantryd's job and scheduling counters (sdiag)");

  CLI::App* queue =
      app.add_subcommand("queue", "List pending and running jobs (squeue)");
  // -h is squeue's --noheader (and sinfo's): help stays on --help.
  queue->set_help_flag("--help", "Print this help message and exit");
  gantry::cli::QueueOptions queue_options;
  queue->add_flag("-a,--all", queue_options.all,
                  "Include finished jobs still in the controller's live "
                  "state (gantryd's MinJobAge, 300 s by default); older "
                  "ones only through gantry job ID");
  queue
      ->add_option("-u,--user", queue_options.users,
                   "Only these users' jobs (USER[,USER...])")
      ->allow_extra_args(false);
  queue
      ->add_option("-j,--jobs", queue_options.job_ids,
                   "Only these jobs, finished ones too (ID[,ID...]; an "
                   "array's ID means all its tasks, ID_TASK one of them)")
      ->allow_extra_args(false);
  queue
      ->add_option("-p,--partition", queue_options.partitions,
                   "Only jobs in these partitions (PART[,PART...])")
      ->allow_extra_args(false);
  queue
      ->add_option("-t,--states", queue_options.states,
                   "Only jobs in these states: PD,R,CD,F,CA,TO,NF,OOM, long "
                   "names, or all (finished ones as for --all)")
      ->allow_extra_args(false);
  queue->add_option("-o,--format", queue_options.format,
                    "squeue layout, e.g. \"%.18i %.8j %T %R\": Slurm's "
                    "letters (%i %j %u %P %T %t %M %l %L %D %C %R %N %V %S "
                    "%e %r %a %q %Q %E %f %Z %o %k %y %v %m %b ...), %.N "
                    "right-aligns in N columns (default: $SQUEUE_FORMAT)");
  queue->add_option("-O,--Format", queue_options.fields,
                    "squeue's field names: JobID,Name:30,State:.10,WorkDir,"
                    "Command,... (name:WIDTH, name:.WIDTH right-aligned; 20 "
                    "columns by default; default: $SQUEUE_FORMAT2)");
  queue->add_option("-S,--sort", queue_options.sort,
                    "Order: letters or field names, + ascending, - "
                    "descending (default P,t,-p or $SQUEUE_SORT)");
  queue->add_flag("-l,--long", queue_options.long_format,
                  "Slurm's long layout (state, time limit) under a date line");
  queue->add_flag("--start", queue_options.start,
                  "Pending jobs with their expected start time (where the "
                  "backfill scheduler reserved nodes; else N/A)");
  std::vector<std::string> queue_steps;
  CLI::Option* queue_steps_option =
      queue
          ->add_option("-s,--steps", queue_steps,
                       "Running steps (STEPID NAME PARTITION USER TIME "
                       "NODELIST), all or JOBID.STEPID[,...]")
          ->expected(0, 1)
          ->allow_extra_args(false);
  queue->add_option("-i,--iterate", queue_options.iterate_seconds,
                    "Show again every SECONDS, under a date line, until "
                    "interrupted");
  queue
      ->add_option("-n,--name", queue_options.names,
                   "Only jobs with these names (NAME[,NAME...])")
      ->allow_extra_args(false);
  queue
      ->add_option("-w,--nodelist", queue_options.nodelists,
                   "Only jobs on these nodes (a hostlist: node[01-04])")
      ->allow_extra_args(false);
  queue->add_flag("--me", queue_options.me, "Only your jobs (--user=$USER)");
  queue
      ->add_option("-A,--account", queue_options.accounts,
                   "Only jobs of these accounts")
      ->allow_extra_args(false);
  queue
      ->add_option("-q,--qos", queue_options.qos,
                   "Only jobs of these QOS (a job that names none has normal)")
      ->allow_extra_args(false);
  queue->add_flag("-v,--verbose", queue_options.verbose,
                  "A date line above the header");
  queue->add_flag("-h,--noheader", queue_options.no_header,
                  "Leave out the header line");
  queue->add_flag("-r,--array", queue_options.array_unfolded,
                  "Every array task on its own line (by default an array's "
                  "pending tasks share one, as 12_[3-9%2])");
  queue->add_flag("--json", queue_options.json, "Machine-readable output");

  CLI::App* cancel = app.add_subcommand(
      "cancel", "Cancel jobs, or signal them with --signal (scancel)");
  gantry::cli::CancelOptions cancel_options;
  cancel->add_option("JOBID", cancel_options.job_ids,
                     "Job ids (an array's ID: all its tasks; ID_TASK: one "
                     "task); none: every job the filters select");
  cancel
      ->add_option("-u,--user", cancel_options.users,
                   "Only these users' jobs (with no ids: all of them; "
                   "default without ids: yours)")
      ->allow_extra_args(false);
  cancel
      ->add_option("-n,--name,--jobname", cancel_options.names,
                   "Only jobs with this name")
      ->allow_extra_args(false);
  cancel
      ->add_option("-t,--state", cancel_options.states,
                   "Only jobs in these states (PD, R, or long names)")
      ->allow_extra_args(false);
  cancel->add_option("-s,--signal", cancel_options.signal,
                     "Send this signal (USR1, SIGTERM, 10, ...) to the "
                     "running tasks instead of cancelling: the step tasks "
                     "(gantry run), or every task of a --per-task job");
  cancel->add_flag("-b,--batch", cancel_options.batch,
                   "With --signal: to the batch script alone");
  cancel->add_flag("-f,--full", cancel_options.full,
                   "With --signal: to the batch script, what it started and "
                   "the step tasks");
  cancel->add_flag("--me", cancel_options.me, "Only your jobs");
  cancel
      ->add_option("-p,--partition", cancel_options.partitions,
                   "Only jobs in these partitions")
      ->allow_extra_args(false);
  cancel
      ->add_option("-w,--nodelist", cancel_options.nodelists,
                   "Only jobs on these nodes (a hostlist)")
      ->allow_extra_args(false);
  cancel
      ->add_option("-A,--account", cancel_options.accounts,
                   "Only jobs of these accounts")
      ->allow_extra_args(false);
  cancel
      ->add_option("-q,--qos", cancel_options.qos,
                   "Only jobs of these QOS (a job that names none has normal)")
      ->allow_extra_args(false);
  cancel->add_flag("-i,--interactive", cancel_options.interactive,
                   "Ask \"Cancel job_id=N name=X partition=P [y/n]?\" for "
                   "each job (answers from standard input)");
  cancel->add_flag("-v,--verbose", cancel_options.verbose,
                   "Say what is done to each job");
  cancel->add_flag("-Q,--quiet", cancel_options.quiet,
                   "No error for jobs that are already gone");

  CLI::App* hold = app.add_subcommand(
      "hold", "Keep pending jobs from starting until released (scontrol hold)");
  std::vector<std::string> hold_ids;
  hold->add_option("JOBID", hold_ids,
                   "Job ids (an array's ID: all its pending tasks; ID_TASK: "
                   "one task)")
      ->required();
  CLI::App* release = app.add_subcommand(
      "release",
      "Let held jobs start: submitted with --hold or held (scontrol release)");
  std::vector<std::string> release_ids;
  release
      ->add_option("JOBID", release_ids,
                   "Job ids (an array's ID: all its pending tasks; ID_TASK: "
                   "one task)")
      ->required();

  CLI::App* job = app.add_subcommand(
      "job",
      "Show one job and its history (scontrol show job), also long after "
      "it left gantry queue --all (for gantryd's history retention); the "
      "script, its arguments and step command lines only to the job's "
      "owner and admins");
  gantry::cli::JobOptions job_options;
  job->add_option("JOBID", job_options.job_id,
                  "Job id, or ARRAYID_TASK for an array task; none: every "
                  "job in the live state");
  job->add_flag("--json", job_options.json, "Machine-readable output");
  job->add_flag("--script", job_options.script,
                "Print the job's batch script (scontrol write batch_script); "
                "only for the job's owner and admins");
  job->add_flag("-d,--details", job_options.details,
                "Each node's share of the allocation too (scontrol -d)");
  job->add_flag("-o,--oneliner", job_options.one_line,
                "Each record on one line (scontrol -o)");
  job->add_flag("--slurm-only", job_options.slurm_only)
      ->group("");  // set when run as scontrol: Slurm's record alone

  CLI::App* nodes = app.add_subcommand(
      "nodes", "Partitions and nodes by state (sinfo); -N: one line per node");
  nodes->set_help_flag("--help", "Print this help message and exit");
  gantry::cli::NodesOptions nodes_options;
  nodes->add_flag("--json", nodes_options.json, "Machine-readable output");
  nodes->add_option("NODE", nodes_options.node,
                    "Show one node's whole inventory (GPUs, HCAs and their "
                    "pairing), as scontrol show node");
  nodes->add_flag("-N,--Node", nodes_options.per_node,
                  "One line per node (sinfo -N)");
  nodes->add_flag("--detail", nodes_options.detail,
                  "Every node's whole record (scontrol show node)");
  nodes
      ->add_option("-p,--partition", nodes_options.partitions,
                   "Only these partitions (PART[,PART...])")
      ->allow_extra_args(false);
  nodes
      ->add_option("-t,--states", nodes_options.states,
                   "Only nodes in these states: idle, mix, alloc, drain, "
                   "drng, resv, down")
      ->allow_extra_args(false);
  nodes->add_flag("-h,--noheader", nodes_options.no_header,
                  "Leave out the header line");
  nodes
      ->add_option("-n,--nodes", nodes_options.nodes,
                   "Only these nodes (a hostlist: node[01-04])")
      ->allow_extra_args(false);
  nodes->add_flag("-R,--list-reasons", nodes_options.list_reasons,
                  "Why nodes are down, drained or draining: REASON USER "
                  "TIMESTAMP NODELIST");
  nodes->add_flag("-s,--summarize", nodes_options.summarize,
                  "One line per partition: NODES(A/I/O/T)");
  nodes->add_flag("-l,--long", nodes_options.long_format,
                  "Slurm's long layout, under a date line");
  nodes->add_option("-O,--Format", nodes_options.fields,
                    "sinfo's field names: NodeList,StateLong:.12,CPUsState,"
                    "... (name:WIDTH, name:.WIDTH; 20 columns by default)");
  nodes->add_option("-i,--iterate", nodes_options.iterate_seconds,
                    "Show again every SECONDS until interrupted");
  nodes->add_flag("-r,--responding", nodes_options.responding,
                  "Only nodes that respond");
  nodes->add_flag("-d,--dead", nodes_options.dead,
                  "Only nodes that do not respond");
  nodes->add_flag("--slurm-layout", nodes_options.slurm_layout)
      ->group("");  // set when run as sinfo: -N in sinfo's columns
  nodes->add_option(
      "-o,--format", nodes_options.format,
      "sinfo's output format, e.g. \"%P %.6D %t %N\": %P partition, %R "
      "partition name, %a avail, %l time limit, %D nodes, %t/%T state, %N "
      "node list, %n host names, %o addresses, %c CPUs, %C CPUs "
      "A/I/O/T, %G GPUs, %m memory, %e free memory, %f features, %E reason, "
      "%O load; %.10X right-aligns in 10 columns");

  CLI::App* hostnames = app.add_subcommand(
      "hostnames",
      "Expand a hostlist, one name per line (scontrol show hostnames)");
  // Taken raw (prefix_command): CLI11 would split a "[1,3-5]" argument as
  // its own list syntax.
  hostnames->prefix_command();
  hostnames->fallthrough(false);
  hostnames->footer("HOSTLIST: e.g. node[01-04]; default: $SLURM_JOB_NODELIST");

  CLI::App* hostlist = app.add_subcommand(
      "hostlist",
      "Compress host names into a hostlist (scontrol show hostlist)");
  hostlist->prefix_command();
  hostlist->fallthrough(false);
  hostlist->footer("HOSTS: e.g. node01,node02; default: $SLURM_JOB_NODELIST");

  CLI::App* status = app.add_subcommand(
      "status",
      "Cluster overview for admins: controller health, nodes and GPUs by "
      "state, GPU utilization, jobs, pending reasons, fabric, dataset "
      "caches, recent failures");
  gantry::cli::StatusOptions status_options;
  status->add_flag("--json", status_options.json,
                   "Machine-readable output (a stable JSON document)");
  status
      ->add_option("--color", status_options.color,
                   "auto (on a terminal, unless NO_COLOR is set), always or "
                   "never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();

  CLI::App* checkpoint = app.add_subcommand(
      "checkpoint",
      "From inside a job: record a completed checkpoint, so a restart "
      "resumes from it (GANTRY_RESUME_FROM)");
  std::string checkpoint_path, progress_job;
  int64_t progress_step = -1;
  checkpoint->add_option("PATH", checkpoint_path, "The checkpoint")->required();
  checkpoint->add_option("--step", progress_step, "Training step it holds");
  checkpoint->add_option("--job", progress_job,
                         "Job id (default: GANTRY_JOB_ID)");

  CLI::App* progress = app.add_subcommand(
      "progress", "From inside a job: report progress (resets --hang-timeout)");
  progress->add_option("--step", progress_step, "Training step reached");
  double progress_step_time = -1;
  int64_t progress_rank = -1;
  progress
      ->add_option("--step-time", progress_step_time,
                   "Seconds the rank's last step took (its own work, not "
                   "waiting on collectives): for the straggler check")
      ->check(CLI::NonNegativeNumber);
  progress
      ->add_option("--rank", progress_rank,
                   "The rank reporting (default: SLURM_PROCID, else RANK, "
                   "when --step is given)")
      ->check(CLI::Range(int64_t{0}, int64_t{0xffffffff}));
  progress->add_option("--job", progress_job,
                       "Job id (default: GANTRY_JOB_ID)");

  CLI::App* drain = app.add_subcommand(
      "drain",
      "Admin: stop placing new work on nodes (scontrol update "
      "state=drain)");
  std::vector<std::string> drain_nodes;
  std::string drain_reason;
  drain->add_option("NODES", drain_nodes, "Node names or hostlists")
      ->required();
  drain->add_option("--reason", drain_reason, "Why (shown in gantry nodes)")
      ->required();
  CLI::App* resume =
      app.add_subcommand("resume", "Admin: let drained nodes take work again");
  resume->add_option("NODES", drain_nodes, "Node names or hostlists")
      ->required();

  CLI::App* handover = app.add_subcommand(
      "handover",
      "Admin: the leading controller hands leadership to a standby, e.g. "
      "before an upgrade (scontrol takeover)");
  std::string handover_standby;
  handover->add_option("STANDBY", handover_standby,
                       "The standby's name, or its position (1, 2, ...) "
                       "among the standbys in name order (default: the most "
                       "caught-up one)");

  CLI::App* topology =
      app.add_subcommand("topology",
                         "Show the switch tree; admins import it with "
                         "`gantry topology import FILE`");
  bool topology_json = false;
  topology->add_flag("--json", topology_json, "Machine-readable output");
  CLI::App* topology_import = topology->add_subcommand(
      "import",
      "Admin: load the switch tree from a Slurm topology.conf or "
      "ibnetdiscover output (a bad file changes nothing)");
  std::string topology_file, topology_format;
  topology_import->add_option("FILE", topology_file, "The file")->required();
  topology_import
      ->add_option("--format", topology_format,
                   "slurm or ibnetdiscover (default: recognised)")
      ->check(CLI::IsMember({"slurm", "ibnetdiscover"}));
  topology_import->add_flag("--json", topology_json, "Machine-readable output");

  // squeue -V, sinfo -V, scancel -V: scripts probe with them.
  for (CLI::App* command : {queue, nodes, cancel}) {
    command->set_version_flag("-V,--version", gantry::cli::kSlurmVersionLine);
  }
  gantry::cli::ScontrolCommands scontrol;
  gantry::cli::AddScontrolCommands(app, scontrol);
  gantry::cli::CacheCommands cache;
  gantry::cli::AddCacheCommands(app, cache);

  if (std::optional<int> code =
          gantry::cli::PrecheckCommandLine(app, invoked, words)) {
    return *code;
  }
  word_pointers.clear();
  for (std::string& word : words) word_pointers.push_back(word.data());
  word_pointers.push_back(nullptr);
  argc = static_cast<int>(words.size());
  argv = word_pointers.data();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (queue->parsed()) {
    if (queue_steps_option->count() > 0) queue_options.steps = queue_steps;
    return gantry::cli::RunQueueCommand(controller, queue_options);
  }
  if (cancel->parsed())
    return gantry::cli::RunCancelCommand(controller, cancel_options);
  if (hold->parsed())
    return gantry::cli::RunHoldCommand(controller, hold_ids, false);
  if (release->parsed())
    return gantry::cli::RunHoldCommand(controller, release_ids, true);
  if (hostnames->parsed())
    return gantry::cli::RunHostnamesCommand(hostnames->remaining());
  if (hostlist->parsed())
    return gantry::cli::RunHostlistCommand(hostlist->remaining());
  if (job->parsed()) return gantry::cli::RunJobCommand(controller, job_options);
  if (nodes->parsed())
    return gantry::cli::RunNodesCommand(controller, nodes_options);
  if (status->parsed())
    return gantry::cli::RunStatusCommand(controller, status_options);
  if (topology->parsed()) {
    return gantry::cli::RunTopologyCommand(controller, topology_file,
                                           topology_format, topology_json);
  }
  if (checkpoint->parsed()) {
    return gantry::cli::RunProgressCommand(controller, progress_job,
                                           checkpoint_path, progress_step);
  }
  if (progress->parsed()) {
    return gantry::cli::RunProgressCommand(controller, progress_job, "",
                                           progress_step, progress_step_time,
                                           progress_rank);
  }
  if (std::optional<int> code =
          gantry::cli::RunScontrolCommands(controller, scontrol)) {
    return *code;
  }
  if (std::optional<int> code =
          gantry::cli::RunCacheCommands(controller, cache)) {
    return *code;
  }
  if (drain->parsed()) {
    return gantry::cli::RunDrainCommand(controller, drain_nodes, drain_reason,
                                        false);
  }
  if (resume->parsed()) {
    return gantry::cli::RunDrainCommand(controller, drain_nodes, "", true);
  }
  if (handover->parsed()) {
    return gantry::cli::RunHandoverCommand(controller, handover_standby);
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // One malloc arena: gRPC's threads each made one of their own (a heap
  // mapped and faulted in per thread) for a process that lives for one
  // request.
  mallopt(M_ARENA_MAX, 1);
  // Follows the leader quickly through a hand-over or a failover.
  gantry::PollReconnectsOften();
  const int status = RunCommandLine(argc, argv);
  // Everything the command had to say is written: leave without tearing
  // gRPC down (ControllerClient keeps its channel for the process). The
  // teardown joins gRPC's threads one by one, which cost more than the
  // request itself when the node was busy (a gang starting).
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(status);
}
