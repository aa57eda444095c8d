// The everyday commands other than `batch`. Each returns the process exit
// code and prints errors as "gantry <command>: error: ...".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gantry::cli {

struct QueueOptions {
  bool all = false;  // include finished jobs
  std::string user;
  bool json = false;
};

int RunQueueCommand(const std::string& controller, const QueueOptions& options);
int RunCancelCommand(const std::string& controller,
                     const std::vector<std::string>& job_ids);
// `script`: print only the batch script (owner and admins).
int RunJobCommand(const std::string& controller, const std::string& job_id,
                  bool json, bool script = false);
int RunNodesCommand(const std::string& controller, const std::string& node,
                    bool json);
int RunStatusCommand(const std::string& controller, bool json);
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
