// The controllers a client knows and the one it dials now, shared by the
// agent's stream (agent/link/controller_link.h) and the CLI's calls
// (cli/client/controller_client.h), so both follow a replicated cluster's
// leader the same way: start with the configured list
// (common/controller_targets.h), and when the controller dialled does not
// serve, go to the leader a standby named in its answer (added to the list if
// new), else to the next in the list.
//
// Endpoint is the caller's per-controller state (a channel, a stub); it is
// made once per address by the function given at construction, which also
// learns whether the client follows several controllers (the channel
// settings differ).
//
// Not thread-safe: one thread moves it (the agent's link thread, the CLI's
// only thread).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/controller_targets.h"

namespace gantry {

template <typename Endpoint>
class LeaderFollower {
 public:
  using MakeEndpoint =
      std::function<Endpoint(const std::string& address, bool several)>;

  // `configured`: one target or several, comma-separated.
  LeaderFollower(const std::string& configured, MakeEndpoint make)
      : make_(std::move(make)) {
    const std::vector<std::string> targets = SplitControllerTargets(configured);
    several_ = targets.size() > 1;
    for (const std::string& target : targets) Add(target);
  }

  // More than one controller is known: a controller that does not serve is
  // not the end. True from the start with a configured list, and from the
  // moment a single configured controller names another as the leader.
  bool several() const { return several_; }
  size_t size() const { return addresses_.size(); }
  size_t current_index() const { return current_; }
  const std::string& current_address() const { return addresses_[current_]; }
  Endpoint& current() { return endpoints_[current_]; }

  // The controller dialled did not serve the call. `named_leader`: the
  // leader its answer named, if any (kLeaderMetadataKey). Moves to that
  // leader (added if new; the client now follows several), else to the
  // next known controller. Returns whether it moved to a named leader other
  // than the one it left, which may be dialled at once.
  bool MoveOn(const std::optional<std::string>& named_leader) {
    const size_t left = current_;
    if (named_leader.has_value()) {
      several_ = true;
      current_ = Add(*named_leader);
      return current_ != left;
    }
    current_ = (current_ + 1) % addresses_.size();
    return false;
  }

 private:
  // The index of `address`, added with its endpoint if new.
  size_t Add(const std::string& address) {
    for (size_t i = 0; i < addresses_.size(); ++i) {
      if (addresses_[i] == address) return i;
    }
    endpoints_.push_back(make_(address, several_));
    addresses_.push_back(address);
    return addresses_.size() - 1;
  }

  MakeEndpoint make_;
  bool several_ = false;
  std::vector<std::string> addresses_;
  std::vector<Endpoint> endpoints_;  // by the index of addresses_
  size_t current_ = 0;
};

// The leader a standby named in a call's trailing metadata
// (grpc::ClientContext::GetServerTrailingMetadata()), if it named one.
template <typename Trailers>
std::optional<std::string> NamedLeader(const Trailers& trailers) {
  auto found = trailers.find(kLeaderMetadataKey);
  if (found == trailers.end()) return std::nullopt;
  return std::string(found->second.data(), found->second.size());
}

}  // namespace gantry
