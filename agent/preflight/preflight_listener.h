// The agent's pre-flight listener: a TCP port on the node's compute
// address (announced in Register.preflight_port) where the ring
// predecessor of a pre-flight gang check sends its bytes
// (agent/preflight/preflight_wire.h). What arrived is kept by the check's token
// until this node's own check collects it.
//
// Anyone who can reach the port can connect, so a connection gets nothing
// until it proves it belongs to a check running here: its header must
// arrive within a second and carry the token of a check this node was given
// (Expect); the controller makes a random token per check and tells it only
// to the gang's agents. Until then it waits in a bounded set served by the
// accepting thread alone (agent/preflight/preflight_pending.h: a flood turns
// over its own connections); a header with another token is dropped at once
// (the predecessor, if its check started before this node's, tries again). Only
// a proven connection is served on a thread of its own, one per token and at
// most kMaxTransfers at once, so idle or junk connections never hold a slot a
// check needs. A bounded number of results is kept.
//
// The same port serves other agent-to-agent exchanges (AddProtocol: the
// in-memory checkpoints' transfers), which prove themselves the same way.
//
// Thread-safe. One thread accepts and reads headers; each proven
// connection is served on its own thread; the destructor ends them all.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "agent/preflight/preflight_pending.h"
#include "agent/preflight/preflight_wire.h"
#include "common/mutex.h"

namespace gantry::agent {

class PreflightListener {
 public:
  // What the predecessor's transfer gave: its rate, or why it failed.
  struct Received {
    double mbps = 0;
    std::string problem;  // empty: all bytes arrived
  };

  // Listens on address:port (0: a free port the OS picks).
  static absl::StatusOr<std::unique_ptr<PreflightListener>> Start(
      const std::string& address, uint32_t port);
  ~PreflightListener();
  PreflightListener(const PreflightListener&) = delete;
  PreflightListener& operator=(const PreflightListener&) = delete;

  uint32_t port() const { return port_; }

  // A check with `token` runs on this node until `until`: a connection whose
  // header carries it is this check's predecessor, and is served.
  void Expect(const std::string& token,
              std::chrono::steady_clock::time_point until);

  // Another exchange on the same port: a connection whose header line
  // starts with `magic` and a space goes to `handler` (on the accepting
  // thread, so it must not block), which takes the descriptor when it
  // returns true; false closes it. Handlers are added before connections
  // arrive and live as long as the listener.
  using LineHandler = std::function<bool(int fd, const std::string& line)>;
  void AddProtocol(const std::string& magic, LineHandler handler);

  // The transfer that came with `token`, waiting for it until `deadline`;
  // nullopt if none finished by then.
  std::optional<Received> WaitFor(
      const std::string& token, std::chrono::steady_clock::time_point deadline);

 private:
  static constexpr size_t kMaxTransfers = 32;
  static constexpr size_t kMaxPending = 256;
  static constexpr size_t kResultsKept = 256;

  PreflightListener(int fd, uint32_t port);
  void AcceptLoop();
  // Accepts what waits in the backlog (a bounded number per call) into
  // `pending`, closing what it pushes out.
  void AcceptWaiting(PreflightPendingSet& pending);
  // Reads what arrived of `fd`'s header; once it is whole, hands a proven
  // connection to a thread of its own or drops it. Either way `fd` leaves
  // `pending` then, as it does on end of file, an error or junk.
  void ReadHeader(int fd, PreflightPendingSet& pending);
  // Serves `fd` on a new thread if `header`'s token is expected here and
  // no other connection serves it; false: the caller closes it.
  bool StartTransfer(int fd, const PreflightHeader& header);
  void Serve(int fd, PreflightHeader header);
  void Record(const std::string& token, Received received);
  LineHandler* HandlerFor(const std::string& line);

  const int listen_fd_;
  const uint32_t port_;
  int wake_[2] = {-1, -1};  // a pipe that ends AcceptLoop's poll
  std::thread acceptor_;

  Mutex mutex_;
  CondVar arrived_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  // Tokens of the checks running here, until when.
  std::map<std::string, std::chrono::steady_clock::time_point> expected_
      ABSL_GUARDED_BY(mutex_);
  std::set<std::string> transferring_ ABSL_GUARDED_BY(mutex_);
  std::set<int> serving_ ABSL_GUARDED_BY(mutex_);
  std::map<int, std::thread> threads_ ABSL_GUARDED_BY(mutex_);
  std::vector<std::thread> finished_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, Received> results_ ABSL_GUARDED_BY(mutex_);
  std::deque<std::string> result_order_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, LineHandler> protocols_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace gantry::agent
