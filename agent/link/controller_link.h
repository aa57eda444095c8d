// The agent's end of the AgentService.Connect stream: dials the controller,
// registers, hands every controller message to a callback, and redials with
// backoff whenever the stream breaks (the controller restarting is normal;
// running ranks are not touched).
//
// Thread-safe: Send may be called from any thread while Run runs on one.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "common/leader_follower.h"
#include "common/mutex.h"
#include "common/tls_credentials.h"
#include "gantry/v1/agent.grpc.pb.h"

namespace gantry::agent {

// The channel settings of every agent stream to gantryd, real or
// simulated: keepalive pings so a dead controller is noticed even when
// nothing is being written, quick redials, large enough messages.
grpc::ChannelArguments AgentChannelArguments(bool several_controllers = false);

class ControllerLink {
 public:
  using RegisterFactory = std::function<v1::Register()>;
  using MessageHandler = std::function<void(const v1::ControllerMessage&)>;

  // `target` is a gRPC target: "HOST:PORT" or "unix:PATH", or several
  // HOST:PORT separated by commas (the controllers of a highly available
  // cluster: the link follows whichever leads).
  // `on_connected` runs on Run's thread right after a stream is registered
  // and ready for Send (the agent resends unacknowledged events there).
  // Each stream carries a MUNGE credential from munged at `munge_socket`
  // (empty: the default) proving the agent's uid to the controller. With
  // `tls.ca_path`, a TCP target is reached over TLS (the caller has checked
  // the CA file: one that cannot be read here is a crash). Until the first
  // stream is up, a TLS link fails fast and logs why (a wrong CA is a
  // handshake error, not a silent wait).
  ControllerLink(std::string target, RegisterFactory make_register,
                 MessageHandler on_message, std::function<void()> on_connected,
                 std::string munge_socket = "", ClientTls tls = {});

  // Connects, registers and reads until Stop; reconnects after failures.
  void Run();
  // Makes Run return soon (cancels the current stream).
  void Stop();
  // Writes a message on the current stream. Returns false when there is no
  // registered stream (the caller keeps what must not be lost and puts it in
  // the next Register).
  bool Send(const v1::AgentMessage& message);
  bool connected() const { return connected_.load(); }

 private:
  using Stream =
      grpc::ClientReaderWriter<v1::AgentMessage, v1::ControllerMessage>;

  struct Endpoint {
    bool uses_tls = false;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<v1::AgentService::Stub> stub;
  };
  // The channel to one controller (LeaderFollower's MakeEndpoint).
  Endpoint MakeEndpoint(const std::string& address, bool several) const;
  // Logs, once per address, that a controller dialled in plain TCP (no
  // --tls-ca) speaks TLS and which setting is missing: gRPC reports only a
  // closed connection. Run's thread.
  void ExplainPlaintextFailure(const std::string& address,
                               const grpc::Status& status);

  const std::string target_;
  const RegisterFactory make_register_;
  const MessageHandler on_message_;
  const std::function<void()> on_connected_;
  const std::string munge_socket_;
  const ClientTls tls_;
  // The controllers and the one dialled now: Run's thread only, after
  // construction.
  LeaderFollower<Endpoint> controllers_;
  std::set<std::string> tls_probed_;  // Run's thread only
  std::atomic<bool> stopping_{false};
  std::atomic<bool> connected_{false};

  // Two locks so that Stop can cancel a stream whose Write is blocked.
  Mutex context_mutex_;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(context_mutex_) = nullptr;
  Mutex write_mutex_;
  Stream* stream_ ABSL_GUARDED_BY(write_mutex_) = nullptr;
};

}  // namespace gantry::agent
