// Where a replicated controller keeps things in etcd, under one prefix
// (--etcd-prefix, so several clusters can share one etcd):
//
//   PREFIX leader            the leader's ControllerMember, on its lease
//   PREFIX leader-successor  a HandoverRecord while a leader hands over on
//                            purpose (on a lease of its own, a few seconds)
//   PREFIX members/NAME      each controller's ControllerMember, on its lease
//   PREFIX log/INDEX         one LogEntry per group commit, INDEX zero-padded
//   PREFIX chunk/INDEX/PART  the parts of an entry too large for one value
//   PREFIX log-truncated     INDEX: entries up to it were deleted (every
//                            controller that follows holds them)
//
// Every value is sealed with the cluster key (record_seal.h), with its key
// as associated data. The snapshot token a standby shows the leader is not
// kept in etcd at all: each controller derives it from the cluster key.
// (Earlier versions kept it in PREFIX snapshot-token; the leader deletes
// that key when it takes office.)
//
// The two leader keys share the prefix `leader()`, so one watch of that
// prefix sees both. Zero-padded decimal indexes sort as numbers, so a range
// read returns the log in order. Thread-safe (immutable).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gantry::replication {

class ReplicationKeys {
 public:
  explicit ReplicationKeys(std::string prefix);

  const std::string& prefix() const { return prefix_; }
  std::string leader() const { return prefix_ + "leader"; }
  std::string successor() const { return prefix_ + "leader-successor"; }
  std::string members() const { return prefix_ + "members/"; }
  std::string member(const std::string& name) const;
  std::string log_prefix() const { return prefix_ + "log/"; }
  std::string log(uint64_t index) const;
  std::string chunk_prefix(uint64_t index) const;
  std::string chunk(uint64_t index, uint32_t part) const;
  // Every chunk key of every entry before `index` sorts in
  // [chunks_begin(), chunk_prefix(index)).
  std::string chunks_begin() const { return prefix_ + "chunk/"; }
  std::string truncated() const { return prefix_ + "log-truncated"; }
  // Where earlier versions published the snapshot token in clear.
  std::string legacy_snapshot_token() const {
    return prefix_ + "snapshot-token";
  }
  // The index of a log key; nullopt for any other key.
  std::optional<uint64_t> LogIndexOf(const std::string& key) const;

 private:
  std::string prefix_;
};

}  // namespace gantry::replication
