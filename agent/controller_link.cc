#include "agent/controller_link.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "common/crash_point.h"
#include "common/log.h"
#include "common/munge_credential.h"
#include "common/rpc_methods.h"

namespace gantry::agent {

grpc::ChannelArguments AgentChannelArguments() {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
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
      uses_tls_(!IsUnixTarget(target_) && !tls_.ca_path.empty()) {
  grpc::ChannelArguments args = AgentChannelArguments();
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentialsFor(target_, tls_, args);
  if (!credentials.ok()) {
    // main checked the file at start: it went away since. Never fall back
    // to plaintext; the restarted agent says what is wrong at start.
    log::Error("cannot use the TLS CA file",
               {{"error", credentials.status().ToString()}});
    std::abort();
  }
  channel_ = grpc::CreateCustomChannel(target_, *credentials, args);
  stub_ = v1::AgentService::NewStub(channel_);
}

void ControllerLink::Run() {
  int backoff_ms = 200;
  bool connected_once = false;
  while (!stopping_) {
    grpc::ClientContext context;
    {
      std::lock_guard lock(context_mutex_);
      context_ = &context;
    }
    if (stopping_) break;
    // Wait for the channel to be ready so a restarting controller is
    // redialled as soon as it listens. Not before a TLS link first came up:
    // a waiting call never says that the handshake failed (wrong CA, wrong
    // name), a failing one does, below.
    context.set_wait_for_ready(!uses_tls_ || connected_once);
    // A fresh credential per stream: munged refuses one used twice.
    absl::StatusOr<std::string> credential = EncodeMungeCredential(
        munge_socket_, MungePayloadFor(kAgentConnectMethod));
    if (credential.ok()) {
      context.AddMetadata(kMungeMetadataKey, *credential);
    } else {
      log::Warn("connecting without a credential",
                {{"error", credential.status().ToString()}});
    }
    std::unique_ptr<Stream> stream = stub_->Connect(&context);
    v1::AgentMessage hello;
    *hello.mutable_register_() = make_register_();
    CrashPoint("agent.register.before_send");
    // Nobody else writes on this stream until stream_ is set, so the
    // (possibly long) wait for the controller holds no lock.
    bool ok = stream->Write(hello);
    if (ok) {
      std::lock_guard lock(write_mutex_);
      stream_ = stream.get();
    }
    if (ok) {
      connected_ = true;
      connected_once = true;
      log::Info("connected to controller", {{"controller", target_}});
      backoff_ms = 200;
      if (on_connected_) on_connected_();
      v1::ControllerMessage message;
      while (stream->Read(&message)) on_message_(message);
      connected_ = false;
    }
    context.TryCancel();
    {
      std::lock_guard lock(write_mutex_);
      stream_ = nullptr;
    }
    {
      std::lock_guard lock(context_mutex_);
      context_ = nullptr;
    }
    grpc::Status status = stream->Finish();
    if (stopping_) break;
    if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
        status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
      log::Error("the controller refused this agent; retrying",
                 {{"controller", target_}, {"error", status.error_message()}});
    }
    if (uses_tls_ && !connected_once &&
        status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      log::Error("cannot connect to the controller over TLS; retrying",
                 {{"controller", target_},
                  {"error", status.error_message()},
                  {"hint", TlsConnectHint(target_, tls_).substr(2)}});
    }
    log::Warn("controller stream ended; reconnecting",
              {{"controller", target_},
               {"code", static_cast<int>(status.error_code())},
               {"error", status.error_message()},
               {"retry_in_ms", backoff_ms}});
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
    backoff_ms = std::min(backoff_ms * 2, 2000);
  }
}

void ControllerLink::Stop() {
  stopping_ = true;
  std::lock_guard lock(context_mutex_);
  if (context_) context_->TryCancel();
}

bool ControllerLink::Send(const v1::AgentMessage& message) {
  std::lock_guard lock(write_mutex_);
  if (!stream_) return false;
  return stream_->Write(message);
}

}  // namespace gantry::agent
