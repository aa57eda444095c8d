// srun --pty on the node: a pseudo-terminal for step task 0, opened by the
// agent before the task starts (its slave side owned by the job's user,
// who opens it as the task's controlling terminal, rank_child.cc), and a
// relay that connects the master side to the waiting srun: the
// terminal's output to srun, srun's keystrokes and window size
// (common/pty_frames.h) to the terminal. Ctrl-C and Ctrl-Z are keystrokes
// the terminal's line discipline turns into signals for the task's
// foreground process group, as on a login.
//
// Each relay runs on its own thread and owns its descriptors; it ends when
// the terminal has no process left (the master reads EIO) or srun goes.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace gantry::agent {

struct OpenedPty {
  int master_fd = -1;      // close-on-exec
  std::string slave_path;  // /dev/pts/N, owned by the job's user
};

// A new pseudo-terminal whose slave `uid`/`gid` may open.
absl::StatusOr<OpenedPty> OpenStepPty(uid_t uid, gid_t gid);

// Connects to srun (`address`), sends `header`, and relays until either
// side ends; takes ownership of `master_fd`. Returns at once.
void StartPtyRelay(int master_fd, const sockaddr_storage& address,
                   socklen_t address_length, std::string header);

}  // namespace gantry::agent
