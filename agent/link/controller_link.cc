#include "agent/link/controller_link.h"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "common/munge_credential.h"
#include "common/rpc_methods.h"
#include "common/tls_probe.h"

namespace gantry::agent {

grpc::ChannelArguments AgentChannelArguments(bool several_controllers) {
  grpc::ChannelArguments args;
  // With several controllers, a frozen leader must be left well within
  // the new leader's --reconnect-grace, or this node's ranks would be
  // declared lost: ping every 2 s, and let a connection attempt that the
  // kernel accepted but nobody answers (a frozen process) give up in 2 s.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, several_controllers ? 2000 : 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, several_controllers ? 2000 : 5000);
  if (several_controllers) {
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    args.SetInt(GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS, 2000);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 2000);
  }
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  args.SetMaxReceiveMessageSize(64 << 20);
  return args;
}

ControllerLink::ControllerLink(std::string target,
                               RegisterFactory make_register,
                               MessageHandler on_message,
                               std::function<void()> on_connected,
                               std::string munge_socket, ClientTls tls)
    : target_(std::move(target)),
      make_register_(std::move(make_register)),
      on_message_(std::move(on_message)),
      on_connected_(std::move(on_connected)),
      munge_socket_(std::move(munge_socket)),
      tls_(std::move(tls)),
      controllers_(target_, [this](const std::string& address, bool several) {
        return MakeEndpoint(address, several);
      }) {}

ControllerLink::Endpoint ControllerLink::MakeEndpoint(
    const std::string& address, bool several) const {
  grpc::ChannelArguments args = AgentChannelArguments(several);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentialsFor(address, tls_, args);
  if (!credentials.ok()) {
    // main checked the file at start: it went away since. Never fall back
    // to plaintext; the restarted agent says what is wrong at start.
    log::Error("cannot use the TLS CA file",
               {{"error", credentials.status().ToString()}});
    std::abort();
  }
  Endpoint endpoint;
  endpoint.uses_tls = !IsUnixTarget(address) && !tls_.ca_path.empty();
  endpoint.channel = grpc::CreateCustomChannel(address, *credentials, args);
  endpoint.stub = v1::AgentService::NewStub(endpoint.channel);
  return endpoint;
}

void ControllerLink::ExplainPlaintextFailure(const std::string& address,
                                             const grpc::Status& status) {
  // gRPC says only that the connection closed: ask the controller
  // whether it speaks TLS (once it answers at all), and if so say what is
  // missing.
  if (tls_probed_.count(address) > 0) return;
  const std::optional<bool> speaks_tls =
      SpeaksTls(address, std::chrono::seconds(2));
  if (!speaks_tls.has_value()) return;  // nobody listens yet: ask next time
  tls_probed_.insert(address);
  if (!*speaks_tls) return;
  log::Error(
      "the controller speaks TLS and this agent has no CA to check it: set "
      "--tls-ca FILE (tls-ca in the [agent] table of /etc/gantry/gantry.toml) "
      "to the CA that signed the controller's certificate; retrying",
      {{"controller", address}, {"error", status.error_message()}});
}

void ControllerLink::Run() {
  // With several controllers (high availability) a dead or standby one
  // must not hold the agent: no waiting for one to come back, and a
  // standby's answer names the leader to dial next. The first redial is
  // quick there: a leader that hands over on purpose is replaced within
  // a fraction of a second.
  const bool several = controllers_.several();
  const int first_backoff_ms = several ? 50 : 200;
  int backoff_ms = first_backoff_ms;
  bool connected_once = false;
  while (!stopping_) {
    // Copied: the list may grow (a named leader) while these are in use.
    const std::string address = controllers_.current_address();
    const bool uses_tls = controllers_.current().uses_tls;
    grpc::ClientContext context;
    {
      MutexLock lock(context_mutex_);
      context_ = &context;
    }
    if (stopping_) break;
    // Wait for the channel to be ready so a restarting controller is
    // redialled as soon as it listens. Not before a TCP link first came up:
    // a waiting call never says that the handshake failed (wrong CA, wrong
    // name, or TLS on one side only), a failing one does, below.
    context.set_wait_for_ready(!several &&
                               (IsUnixTarget(address) || connected_once));
    // A fresh credential per stream: munged refuses one used twice.
    absl::StatusOr<std::string> credential = EncodeMungeCredential(
        munge_socket_, MungePayloadFor(kAgentConnectMethod));
    if (credential.ok()) {
      context.AddMetadata(kMungeMetadataKey, *credential);
    } else {
      log::Warn("connecting without a credential",
                {{"error", credential.status().ToString()}});
    }
    std::unique_ptr<Stream> stream =
        controllers_.current().stub->Connect(&context);
    v1::AgentMessage hello;
    *hello.mutable_register_() = make_register_();
    CrashPoint("agent.register.before_send");
    // Nobody else writes on this stream until stream_ is set, so the
    // (possibly long) wait for the controller holds no lock.
    bool ok = stream->Write(hello);
    if (ok) {
      MutexLock lock(write_mutex_);
      stream_ = stream.get();
    }
    if (ok) {
      connected_ = true;
      connected_once = true;
      log::Info("connected to controller", {{"controller", address}});
      backoff_ms = first_backoff_ms;
      if (on_connected_) on_connected_();
      v1::ControllerMessage message;
      while (stream->Read(&message)) on_message_(message);
      connected_ = false;
    }
    context.TryCancel();
    {
      MutexLock lock(write_mutex_);
      stream_ = nullptr;
    }
    {
      MutexLock lock(context_mutex_);
      context_ = nullptr;
    }
    grpc::Status status = stream->Finish();
    if (stopping_) break;
    if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
        status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
      log::Error("the controller refused this agent; retrying",
                 {{"controller", address}, {"error", status.error_message()}});
    }
    if (uses_tls && !connected_once &&
        status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      log::Error("cannot connect to the controller over TLS; retrying",
                 {{"controller", address},
                  {"error", status.error_message()},
                  {"hint", TlsConnectHint(address, tls_).substr(2)}});
    }
    if (!uses_tls && !connected_once && !IsUnixTarget(address) &&
        status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      ExplainPlaintextFailure(address, status);
    }
    log::Warn("controller stream ended; reconnecting",
              {{"controller", address},
               {"code", static_cast<int>(status.error_code())},
               {"error", status.error_message()},
               {"retry_in_ms", backoff_ms}});
    // Straight to a named leader; after a full round of refusals, back
    // off as for one controller.
    if (several &&
        controllers_.MoveOn(NamedLeader(context.GetServerTrailingMetadata()))) {
      continue;
    }
    // The backoff, spent connecting the channel dialled next: gRPC retries
    // a connection only while someone polls the channel, and only agents
    // with several controllers have the backup poller run often (main.cc).
    const auto retry_at = std::chrono::system_clock::now() +
                          std::chrono::milliseconds(backoff_ms);
    controllers_.current().channel->WaitForConnected(retry_at);
    std::this_thread::sleep_until(retry_at);
    backoff_ms = std::min(backoff_ms * 2, several ? 1000 : 2000);
  }
}

void ControllerLink::Stop() {
  stopping_ = true;
  MutexLock lock(context_mutex_);
  if (context_) context_->TryCancel();
}

bool ControllerLink::Send(const v1::AgentMessage& message) {
  MutexLock lock(write_mutex_);
  if (!stream_) return false;
  return stream_->Write(message);
}

}  // namespace gantry::agent
