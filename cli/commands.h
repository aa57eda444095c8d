// The everyday commands other than `batch`. Each returns the process exit
// code and prints errors as "gantry <command>: error: ...".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gantry::cli {

// squeue's selection and layout. List options take comma-separated values
// and may be repeated.
struct QueueOptions {
  bool all = false;  // include finished jobs
  std::vector<std::string> users;
  std::vector<std::string> job_ids;
  std::vector<std::string> partitions;
  std::vector<std::string> states;  // names or short forms, or "all"
  std::string format;               // squeue %-fields; empty: the default
  bool no_header = false;
  bool json = false;
  bool array_unfolded = false;  // -r: every array task on its own line
};

int RunQueueCommand(const std::string& controller, const QueueOptions& options);

// scancel: the jobs named, narrowed by the filters; with no ids, every job of
// the filters' users (default: the caller) that is pending or running.
struct CancelOptions {
  std::vector<std::string> job_ids;
  std::vector<std::string> users;
  std::vector<std::string> names;
  std::vector<std::string> states;
  std::string signal;  // non-empty: send it to the running ranks instead
  bool batch = false;  // -b: the signal to the batch script alone
  bool full = false;   // -f: to every process of the job
};

int RunCancelCommand(const std::string& controller,
                     const CancelOptions& options);

// `gantry hold` / `gantry release` (scontrol hold / release): held jobs
// stay pending until released. Ids as for cancel.
int RunHoldCommand(const std::string& controller,
                   const std::vector<std::string>& job_ids, bool release);

// `scontrol show hostnames [HOSTLIST]`: one name per line; no argument:
// $SLURM_JOB_NODELIST. Needs no controller.
int RunHostnamesCommand(const std::vector<std::string>& hostlists);
// `script`: print only the batch script (owner and admins).
int RunJobCommand(const std::string& controller, const std::string& job_id,
                  bool json, bool script = false);
// sinfo: the partition summary, or with `per_node` one line per node
// (sinfo -N); `node` non-empty: that node's whole record (scontrol show
// node); `detail`: that record for every node.
struct NodesOptions {
  std::string node;
  bool per_node = false;
  bool detail = false;
  std::vector<std::string> partitions;
  std::vector<std::string> states;
  bool no_header = false;
  bool json = false;
  std::string format;  // sinfo -o; empty: the default views
};

int RunNodesCommand(const std::string& controller, const NodesOptions& options);
// From inside a job (GANTRY_JOB_ID) or for --job: a completed checkpoint
// (`path` non-empty) or plain progress.
int RunProgressCommand(const std::string& controller, const std::string& job,
                       const std::string& path, int64_t step);
// `gantry topology [--json]`, and `gantry topology import FILE`.
int RunTopologyCommand(const std::string& controller, const std::string& file,
                       const std::string& format, bool json);
int RunDrainCommand(const std::string& controller,
                    const std::vector<std::string>& nodes,
                    const std::string& reason, bool resume);

}  // namespace gantry::cli
