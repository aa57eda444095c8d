// A batch job request as the user wrote it: the result of reading `#SBATCH`
// (or `#GANTRY`) directives and command-line options. Plain data, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/dataset_spec.h"

namespace gantry {

struct JobRequest {
  std::string job_name;               // -J/--job-name
  std::optional<uint32_t> nodes;      // -N/--nodes (a range's MAX)
  std::optional<uint32_t> min_nodes;  // -N MIN-MAX: MIN; unset: fixed
  bool elastic = false;  // --elastic: grows back at once (torchrun elastic)
  // --memory-checkpoints: snapshots in node memory, replicated to a peer
  bool memory_checkpoints = false;
  std::optional<uint32_t> ntasks;           // -n/--ntasks
  std::optional<uint32_t> ntasks_per_node;  // --ntasks-per-node
  std::optional<uint32_t> cpus_per_task;    // -c/--cpus-per-task
  std::optional<uint32_t> gpus_per_node;    // --gpus-per-node, --gres=gpu:N
  std::string gpu_type;  // the type in --gres=gpu:TYPE:N and the like
  std::optional<uint64_t> mem_per_node_mb;       // --mem
  std::optional<uint64_t> time_limit_seconds;    // -t/--time; 0 = unlimited
  std::string partition;                         // -p/--partition
  std::string output;                            // -o/--output
  std::string error;                             // -e/--error
  std::string chdir;                             // -D/--chdir
  bool parsable = false;                         // --parsable
  std::string checkpoint_dir;                    // --checkpoint-dir
  std::optional<uint32_t> max_restarts;          // --max-restarts (0 allowed)
  std::optional<uint64_t> hang_timeout_seconds;  // --hang-timeout
  std::optional<bool> preflight;                 // --preflight[=yes|no]
  bool exclusive = false;                        // --exclusive: whole nodes
  std::optional<uint32_t> max_switches;          // --switches=N[@maxwait]
  std::optional<uint64_t> switches_max_wait_seconds;  // the @maxwait part
  // --dataset-locality=cache: placement puts cached datasets before the
  // switch span (default topology: the span first).
  bool dataset_locality_cache = false;
  std::string dependency;  // -d/--dependency, checked (job_dependency.h)
  std::string array;       // -a/--array, canonical (job_array.h); empty: none
  // --per-task: the script is every task (on every node) instead of
  // running once on the first node.
  bool per_task = false;
  std::string begin;        // --begin as given, checked (begin_time.h)
  std::string deadline;     // --deadline as given, checked (begin_time.h)
  std::string export_spec;  // --export; empty: ALL (export_environment.h)
  std::string export_file;  // --export-file=FILE|FD (export_file.h)
  bool no_requeue = false;  // --no-requeue: no automatic restart
  bool test_only = false;   // --test-only: validate, submit nothing
  bool wait = false;        // -W/--wait: return when the job has ended
  bool quiet = false;       // -Q/--quiet: no warnings on standard error
  std::string account;      // -A/--account: a name (JobSpec.account)
  std::string qos;          // -q/--qos: a name (JobSpec.qos)
  bool hold = false;        // -H/--hold: submitted held (scontrol release)
  bool version = false;  // -V/--version (command line): print, submit nothing
  // --wrap=COMMAND (command line only): the script is COMMAND under
  // #!/bin/sh, as sbatch writes it.
  std::string wrap;
  // Other ways to say GPUs and memory, turned into gpus_per_node and
  // mem_per_node_mb by ResolveDerivedResources once all options are read.
  std::optional<uint32_t> gpus;           // -G/--gpus, for the whole job
  std::optional<uint32_t> gpus_per_task;  // --gpus-per-task
  std::optional<uint32_t>
      ntasks_per_gpu;  // --ntasks-per-gpu (ntasks_per_gpu.h)
  std::optional<uint64_t> mem_per_cpu_mb;  // --mem-per-cpu
  std::optional<uint64_t> mem_per_gpu_mb;  // --mem-per-gpu
  // Set by ResolveDerivedResources: --gpus with no -N (nor a per-node GPU
  // count) goes to gantryd as a total, and so does --mem-per-gpu with it:
  // the controller picks the nodes (JobSpec.gpus, JobSpec.mem_per_gpu_mb).
  bool gpus_left_to_controller = false;
  // -w/--nodelist (every one in the allocation) and -x/--exclude, as
  // expanded host names; -C/--constraint, checked (node_constraint.h).
  std::vector<std::string> nodelist;
  std::vector<std::string> exclude;
  std::string constraint;
  // --signal=[B:]SIG[@TIME]: SIG (a number) TIME seconds before the time
  // limit, to the batch script alone when batch_only.
  int warning_signal = 0;
  uint32_t warning_signal_seconds = 0;
  bool warning_signal_batch_only = false;
  // --open-mode: append to the output files instead of truncating them.
  std::optional<bool> append_output;
  // --dataset=NAME:PATH, in order; a NAME given again replaces the earlier
  // one (so the command line wins over a directive).
  std::vector<DatasetDeclaration> datasets;
  // Options accepted but with no effect here; each gets a one-line warning.
  std::vector<std::string> warnings;
};

}  // namespace gantry
