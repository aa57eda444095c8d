// The agent's directory for one job attempt on a node,
// WORK_DIR/jobs/JOB.ATTEMPT: it holds the batch script and the command
// files of the job's steps, and belongs to the job's user while the
// attempt runs (the script is theirs to run and no one else's to read).
//
// Because the user owns it, nothing in it is trusted: a file is written by
// creating a new one relative to the directory's descriptor, never through
// a name the user may have planted (a symbolic or hard link to a system
// file is replaced, not written through, chmod-ed or chown-ed), and the
// directory is emptied as its owner (see user_file_access.h), so removing
// it cannot reach past what that user could delete themselves.
//
// Thread-safe: functions of the paths given; callers keep one attempt's
// directory to one thread at a time (the launcher's lock does).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "agent/launch/rank_identity.h"

namespace gantry::agent {

// Writes `content` as the new file `name` (no slash) in `job_dir`, which is
// created when missing (its parent must exist and be the agent's). With
// user.switch_user the file and the directory are handed to the user, mode
// 0700; else the file is 0755.
// Errors: FAILED_PRECONDITION when `job_dir` is a symbolic link, not a
// directory, or owned by someone other than the agent or the user;
// UNAVAILABLE when a system call fails (naming the path and the reason).
absl::Status WriteJobFile(const std::string& job_dir, const std::string& name,
                          const std::string& content, const RankIdentity& user);

// Removes `job_dir` and everything in it: its contents as the directory's
// owner, then the directory itself. A failure is logged (the next agent
// start tries again); a missing directory is not one.
void RemoveJobDirectory(const std::string& job_dir);

}  // namespace gantry::agent
