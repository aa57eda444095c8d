// A daemon must not die of SIGPIPE. Its log goes to stderr, and outside
// systemd (which ignores SIGPIPE for its services) stderr may be a pipe
// whose reader has gone: a shell pipeline, a supervisor that restarted, a
// terminal closed. With the default disposition the next log line would end
// the daemon without a word, the one failure its log can never show. With
// SIGPIPE ignored such a write fails with EPIPE and the daemon goes on.
// Children get every signal back at its default (agent/launch/rank_child.cc,
// agent/system/spawn_signals.h), so programs they run see the usual SIGPIPE.
#pragma once

#include <csignal>

namespace gantry {

inline void IgnoreBrokenPipes() { std::signal(SIGPIPE, SIG_IGN); }

}  // namespace gantry
