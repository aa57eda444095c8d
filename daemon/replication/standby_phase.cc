#include "daemon/replication/standby_phase.h"

#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/systemd_notify.h"
#include "daemon/replication/standby_service.h"

namespace gantry::replication {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

// Under systemd (Type=notify, WatchdogSec=, as the shipped unit has it) a
// standby is a service doing its job: READY=1 once it answers on its
// ports, and watchdog pings while its campaign goes round, so that a stuck
// standby is restarted as a stuck leader is, and a healthy one is neither
// timed out at start nor killed for want of pings after a step-down.
class StandbyNotifier {
 public:
  explicit StandbyNotifier(const Leadership& leadership)
      : leadership_(leadership) {
    systemd::NotifyReady("standby: following the log in etcd");
    const auto interval = systemd::WatchdogPingInterval();
    if (interval.count() == 0) return;
    pinger_ = std::thread([this, interval] {
      uint64_t seen = leadership_.campaign_rounds();
      systemd::NotifyWatchdog();
      MutexLock lock(mutex_);
      while (!stop_changed_.WaitFor(lock, interval, [this] {
        mutex_.AssertHeld();
        return stop_;
      })) {
        const uint64_t rounds = leadership_.campaign_rounds();
        if (rounds != seen) systemd::NotifyWatchdog();
        seen = rounds;
      }
    });
  }
  ~StandbyNotifier() {
    {
      MutexLock lock(mutex_);
      stop_ = true;
    }
    stop_changed_.NotifyAll();
    if (pinger_.joinable()) pinger_.join();
  }

 private:
  const Leadership& leadership_;
  Mutex mutex_;
  CondVar stop_changed_;
  bool stop_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread pinger_;
};

}  // namespace

absl::StatusOr<Elected> StandUntilElected(
    ReplicationOptions options, RocksDbStore& local,
    ReplicatedController::StepDown step_down, const StandbyPorts& ports,
    prometheus::Registry* metrics) {
  if (options.name.empty()) options.name = HostName();
  auto standby = std::make_unique<StandbyService>(options.name);
  // Two servers: the unix socket must be closed before the controller's
  // server binds it (closing a unix listener unlinks its path, which by
  // then would be the controller's), the TCP port only after.
  // Each server has an endpoint of its own: gRPC registers a callback
  // generic service with one server only.
  std::unique_ptr<grpc::CallbackGenericService> endpoint;
  std::unique_ptr<grpc::Server> server;
  int selected_port = 0;
  if (!ports.listen.empty()) {
    endpoint = standby->NewEndpoint();
    grpc::ServerBuilder builder;
    builder.AddListeningPort(ports.listen, ports.tcp_credentials,
                             &selected_port);
    builder.RegisterCallbackGenericService(endpoint.get());
    server = builder.BuildAndStart();
    if (!server || selected_port == 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", ports.listen));
    }
  }
  std::unique_ptr<grpc::CallbackGenericService> socket_endpoint;
  std::unique_ptr<grpc::Server> socket_server;
  if (!ports.socket.empty()) {
    socket_endpoint = standby->NewEndpoint();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + ports.socket,
                             grpc::InsecureServerCredentials());
    builder.RegisterCallbackGenericService(socket_endpoint.get());
    socket_server = builder.BuildAndStart();
    if (!socket_server) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", ports.socket));
    }
    // As the controller's own socket: every local user may ask, and be
    // told where the leader is.
    chmod(ports.socket.c_str(), 0666);
  }
  Elected elected;
  elected.listen = ports.listen;
  if (!ports.listen.empty()) {
    std::string host = ports.listen.substr(0, ports.listen.rfind(':'));
    elected.listen = absl::StrCat(host, ":", selected_port);
    if (host.empty() || host == "0.0.0.0" || host == "[::]") host = HostName();
    if (options.address.empty()) {
      options.address = absl::StrCat(host, ":", selected_port);
    }
  }
  absl::StatusOr<std::unique_ptr<ReplicatedController>> controller =
      ReplicatedController::Create(options, local, std::move(step_down));
  if (!controller.ok()) return controller.status();
  if (metrics != nullptr) {
    elected.metrics =
        std::make_unique<ReplicationMetrics>(*metrics, **controller);
  }
  log::Info("standby serving", {{"name", options.name},
                                {"address", options.address},
                                {"socket", ports.socket}});
  absl::Status leading;
  {
    StandbyNotifier notifier((*controller)->leadership());
    leading = (*controller)->WaitUntilLeader(*standby);
  }
  const auto now = std::chrono::system_clock::now;
  if (socket_server) {
    // Local clients find the socket missing for a moment and retry.
    socket_server->Shutdown(now() + std::chrono::milliseconds(100));
    socket_server->Wait();
  }
  if (!leading.ok()) {
    elected.metrics.reset();  // before the controller it samples
    if (server) server->Shutdown(now());
    return leading;
  }
  // Callers that reach these ports until the controller's own server
  // listens beside them (SO_REUSEPORT) are sent to this very address.
  v1::ControllerMember self;
  self.set_name(options.name);
  self.set_address(options.address);
  standby->SetLeader(self);
  elected.controller = std::move(*controller);
  elected.standby_service = std::move(standby);
  elected.standby_endpoint = std::move(endpoint);
  elected.standby_server = std::move(server);
  return elected;
}

void Elected::CloseStandbyPorts() {
  if (!standby_server) {
    standby_endpoint.reset();
    standby_service.reset();
    return;
  }
  // Refusals are answered at once; agents' streams and callers that have
  // not read theirs yet are cut (they redial, and reach the controller's
  // server), not waited for.
  standby_server->Shutdown(std::chrono::system_clock::now() +
                           std::chrono::milliseconds(100));
  standby_server->Wait();
  standby_server.reset();
  standby_endpoint.reset();
  standby_service.reset();
  log::Info("standby ports closed");
}

}  // namespace gantry::replication
