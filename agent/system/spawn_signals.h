// Signal state for the programs the agent starts with posix_spawn
// (pre-flight commands, dataset helpers): each starts with every signal at
// its default disposition and none blocked, whatever the agent ignores or
// blocks. An agent started in the background by a non-interactive shell
// ignores SIGINT and SIGQUIT, and the agent blocks its stop signals in
// every thread; neither is the started program's business. (Ranks are
// started with vfork instead: agent/launch/rank_child.cc resets the same
// there.)
//
// Thread-safe: touches only the attributes it is given.
#pragma once

#include <spawn.h>

namespace gantry::agent {

// Adds "every signal to SIG_DFL, an empty mask" to `attributes`, keeping
// the flags already set on them.
void ResetSignalsOnSpawn(posix_spawnattr_t& attributes);

}  // namespace gantry::agent
