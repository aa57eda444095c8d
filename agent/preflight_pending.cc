#include "agent/preflight_pending.h"

#include <algorithm>
#include <utility>

namespace gantry::agent {

std::optional<int> PreflightPendingSet::Add(int fd, std::string source,
                                            Clock::time_point deadline) {
  std::optional<int> evicted;
  if (!connections_.empty() && connections_.size() >= capacity_) {
    evicted = ChooseEvicted();
    connections_.erase(*evicted);
  }
  connections_[fd] = Connection{
      .source = std::move(source), .deadline = deadline, .received = {}};
  return evicted;
}

PreflightPendingSet::Connection* PreflightPendingSet::Find(int fd) {
  auto it = connections_.find(fd);
  return it == connections_.end() ? nullptr : &it->second;
}

void PreflightPendingSet::Remove(int fd) { connections_.erase(fd); }

std::vector<int> PreflightPendingSet::TakeExpired(Clock::time_point now) {
  std::vector<int> expired;
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->second.deadline <= now) {
      expired.push_back(it->first);
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
  return expired;
}

std::optional<PreflightPendingSet::Clock::time_point>
PreflightPendingSet::NextDeadline() const {
  std::optional<Clock::time_point> next;
  for (const auto& [fd, connection] : connections_) {
    if (!next || connection.deadline < *next) next = connection.deadline;
  }
  return next;
}

std::vector<int> PreflightPendingSet::Descriptors() const {
  std::vector<int> fds;
  fds.reserve(connections_.size());
  for (const auto& [fd, connection] : connections_) fds.push_back(fd);
  return fds;
}

int PreflightPendingSet::ChooseEvicted() const {
  // Per source: how many, and its oldest (earliest deadline: all get the
  // same wait, so the earliest deadline is the oldest arrival).
  struct Tally {
    size_t count = 0;
    int oldest_fd = -1;
    Clock::time_point oldest_deadline = Clock::time_point::max();
  };
  std::map<std::string, Tally> tallies;
  for (const auto& [fd, connection] : connections_) {
    Tally& tally = tallies[connection.source];
    ++tally.count;
    if (connection.deadline < tally.oldest_deadline) {
      tally.oldest_deadline = connection.deadline;
      tally.oldest_fd = fd;
    }
  }
  const Tally* chosen = nullptr;
  for (const auto& [source, tally] : tallies) {
    if (chosen == nullptr || tally.count > chosen->count ||
        (tally.count == chosen->count &&
         tally.oldest_deadline < chosen->oldest_deadline)) {
      chosen = &tally;
    }
  }
  return chosen->oldest_fd;
}

}  // namespace gantry::agent
