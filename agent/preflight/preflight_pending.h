// The connections a pre-flight listener accepted that have not yet proven
// they belong to a check running on this node
// (agent/preflight/preflight_listener.h): each has until its deadline to send a
// header with an expected token.
//
// The set is bounded, and a connection never waits to be accepted behind
// it: when it is full, the newest arrival pushes out the oldest connection
// of the source address that has the most of them. A flood of idle
// connections from one host then turns over its own connections only, and
// a ring peer, which sends its header as soon as it connects, is read long
// before so many newer connections could push it out.
//
// Thread-compatible: the listener's accepting thread alone uses it. It
// owns no descriptor; the caller closes what it removes.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gantry::agent {

class PreflightPendingSet {
 public:
  using Clock = std::chrono::steady_clock;

  struct Connection {
    std::string source;  // the peer's address, without the port
    Clock::time_point deadline;
    std::string received;  // the header so far
  };

  explicit PreflightPendingSet(size_t capacity) : capacity_(capacity) {}

  // Adds `fd`; returns the descriptor pushed out to make room (to close),
  // if the set was full.
  std::optional<int> Add(int fd, std::string source,
                         Clock::time_point deadline);
  // Null when `fd` is not here.
  Connection* Find(int fd);
  void Remove(int fd);
  // Removes and returns the connections whose deadline is past `now`.
  std::vector<int> TakeExpired(Clock::time_point now);
  // The earliest deadline; nullopt when empty.
  std::optional<Clock::time_point> NextDeadline() const;

  size_t size() const { return connections_.size(); }
  std::vector<int> Descriptors() const;

 private:
  // The oldest connection of the source with the most connections.
  int ChooseEvicted() const;

  const size_t capacity_;
  std::map<int, Connection> connections_;
};

// What ReadPendingHeader made of what arrived.
enum class PendingHeader {
  kIncomplete,  // no newline yet: more to come
  kComplete,    // connection.received holds the line, newline removed
  kDropped,     // end of file, an error, or longer than the limit
};

// Reads what arrived of `fd`'s '\n'-terminated header line into
// `connection.received`, never past the newline (what follows it belongs
// to the exchange). Peeked first, then consumed as it comes, so that a
// header sent in pieces does not keep poll waking. Non-blocking.
PendingHeader ReadPendingHeader(int fd,
                                PreflightPendingSet::Connection& connection,
                                size_t limit);

}  // namespace gantry::agent
