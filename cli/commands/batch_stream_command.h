// `gantry batch-stream`: many batch jobs from one process, on one
// connection. Standard input holds one job per line, each a JSON array of
// the words `gantry batch` would take ("[\"-N\", \"2\", \"train.sh\",
// \"--lr\", \"0.1\"]"); each is prepared exactly as `gantry batch` prepares
// it (directives, SBATCH_* variables, the exported environment), then all
// go to gantryd on one SubmitStream call. Standard output gets one JSON
// line per job as its answer comes: {"line": N, "job_id": ID} or
// {"line": N, "error": "..."} (N counts input lines from 1). The exit code
// is 0 when every job was stored.
//
// For programs that submit sweeps: one `gantry batch` process per job
// costs its start-up and a connection each (about 19 ms here); a stream
// costs the job's own work. packaging/python/gantry_submit.py drives it
// from Python.
#pragma once

#include <string>
#include <vector>

namespace gantry::cli {

extern const char kBatchStreamHelp[];

// Returns the process exit code.
int RunBatchStreamCommand(const std::vector<std::string>& args,
                          const std::string& controller_flag);

}  // namespace gantry::cli
