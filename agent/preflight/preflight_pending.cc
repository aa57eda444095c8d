#include "agent/preflight/preflight_pending.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

PendingHeader ReadPendingHeader(int fd,
                                PreflightPendingSet::Connection& connection,
                                size_t limit) {
  std::string buffer(limit + 1, '\0');
  const ssize_t peeked =
      recv(fd, buffer.data(), buffer.size(), MSG_PEEK | MSG_DONTWAIT);
  if (peeked < 0 &&
      (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return PendingHeader::kIncomplete;
  }
  if (peeked <= 0) return PendingHeader::kDropped;  // end of file, an error
  const char* newline = static_cast<const char*>(
      std::memchr(buffer.data(), '\n', static_cast<size_t>(peeked)));
  const size_t take = newline ? static_cast<size_t>(newline - buffer.data()) + 1
                              : static_cast<size_t>(peeked);
  if (recv(fd, buffer.data(), take, MSG_DONTWAIT) !=
      static_cast<ssize_t>(take)) {
    return PendingHeader::kDropped;
  }
  connection.received.append(buffer.data(), newline ? take - 1 : take);
  if (connection.received.size() > limit) return PendingHeader::kDropped;
  return newline ? PendingHeader::kComplete : PendingHeader::kIncomplete;
}

}  // namespace gantry::agent
