// Named crash points: places in gantryd and gantry-agent where a test can
// make the process die exactly as `kill -9` would, so that every crash
// window is walked by the test suite rather than hit by chance (the model is
// RocksDB's sync points). Compiled into the normal build and off by
// default: a point costs one load of a flag when no point is armed.
//
// Arming: the environment variable GANTRY_CRASH_AT=NAME[:N][,NAME[:N]...]
// makes the process SIGKILL itself the Nth time (default the first) it
// passes NAME. GANTRY_CRASH_AT=list prints the process's points and exits.
// An unknown name is refused at start (CheckCrashPointsArmed), so a typo in
// a test cannot silently walk nothing.
//
// Thread-safe: the arming is read once; hit counts are atomic.
#pragma once

#include <array>
#include <span>
#include <string_view>

#include "absl/status/status.h"

namespace gantry {

// Every crash point, by process. Names say where the process dies; the
// comment beside each says which invariant the window tests.
inline constexpr std::array<std::string_view, 12> kControllerCrashPoints = {
    // A submission is durable, its reply not yet sent: the client sees an
    // error, and the job exists once (never twice).
    "gantryd.submit.after_commit_before_reply",
    // A job's start is durable, no agent has its launch: the restarted
    // controller re-sends it, drains nothing, spends no restart.
    "gantryd.start.after_commit_before_launch",
    // The launch went out, the ranks' start not yet heard of.
    "gantryd.start.after_launch_sent",
    // A rank's exit is durable, the agent's copy not yet acknowledged: the
    // agent sends it again and it counts once.
    "gantryd.exit.after_commit_before_ack",
    // An agent's registration is staged, not yet durable or answered.
    "gantryd.register.before_commit",
    // A failed attempt's requeue is durable; the other ranks' kill not yet
    // sent.
    "gantryd.requeue.after_commit_before_kill",
    // A step's launch is durable, no agent has its tasks.
    "gantryd.step.after_commit_before_launch",
    // A cancel is durable, the kill not yet sent.
    "gantryd.cancel.after_commit_before_kill",
    // An interactive allocation whose client went silent has ended
    // (InactiveLimit) durably; the kill of its step tasks not yet sent.
    "gantryd.inactive.after_commit_before_kill",
    // A replicated controller (--etcd): a batch is in the log in etcd, not
    // yet in the leader's RocksDB nor acknowledged. The next leader (or
    // this one, restarted) applies it from the log.
    "gantryd.replicate.after_append_before_apply",
    // A standby has a complete, checked copy of the leader's state beside
    // its own database, not yet put in its place: the next start installs
    // it.
    "gantryd.snapshot.after_ready_before_install",
    // Installing that copy: the old database is moved aside, the copy not
    // yet in its place. The next start finishes the installation.
    "gantryd.snapshot.between_renames",
};

inline constexpr std::array<std::string_view, 11> kAgentCrashPoints = {
    // The launch arrived, no rank forked yet.
    "agent.launch.after_receive_before_start",
    // Every rank of the launch started, the controller not yet told.
    "agent.launch.after_start",
    // A rank exited; its exit is journaled but not yet sent.
    "agent.exit.before_report",
    // The stream is open, the Register not yet sent.
    "agent.register.before_send",
    // A step's launch arrived, its tasks not yet started.
    "agent.step.after_receive_before_start",
    // A dataset file is copied, verified and journaled, the rest of the
    // tree not yet: the next stage resumes from the journal and never
    // serves the partial copy.
    "agent.dataset.after_file_copied",
    // A dataset record's new text is written and synced beside the old
    // one, not yet renamed over it: the next open drops the temporary and
    // keeps the old record (or none).
    "agent.dataset.record_before_rename",
    // A copy's partial record is durable, the copy not started: the next
    // open keeps the record only if a partial copy exists to resume.
    "agent.dataset.after_partial_record",
    // The copy is complete on disk, its record still says partial: the
    // next open never serves it (its files are unverified) and removes it.
    "agent.dataset.after_copy_before_record",
    // An entry's record is removed (eviction, a newer version, a changed
    // copy), its files not yet: the next open removes them as unknown.
    "agent.dataset.after_unrecord_before_remove",
    // Files in a user's cache directory that the cache does not know are
    // found, not yet removed: the next open finds and removes them again.
    "agent.dataset.before_unknown_removed",
};

// A crash point's name, checked at compile time against the lists above, so
// a point placed in the code is always one a test can arm and walk.
class CrashPointName {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): a literal is the point.
  consteval CrashPointName(const char* name) : name_(name) {
    bool known = false;
    for (std::string_view point : kControllerCrashPoints) {
      known = known || point == name_;
    }
    for (std::string_view point : kAgentCrashPoints) {
      known = known || point == name_;
    }
    // Not a constant expression: the build fails on an unlisted name.
    if (!known) throw "unknown crash point: add it to common/crash_point.h";
  }
  std::string_view view() const { return name_; }

 private:
  std::string_view name_;
};

// Dies (SIGKILL to itself, after one line on stderr) when `name` is armed
// and this is the hit it was armed for.
void CrashPoint(CrashPointName name);

// Checks GANTRY_CRASH_AT against `known` (the process's own list): OK when
// unset or valid; INVALID_ARGUMENT naming the unknown point otherwise.
// With GANTRY_CRASH_AT=list, prints `known` one per line and exits 0.
absl::Status CheckCrashPointsArmed(std::span<const std::string_view> known);

}  // namespace gantry
