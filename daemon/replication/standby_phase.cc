#include "daemon/replication/standby_phase.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "daemon/replication/standby_service.h"

namespace gantry::replication {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

}  // namespace

absl::StatusOr<Elected> StandUntilElected(
    ReplicationOptions options, RocksDbStore& local,
    ReplicatedController::StepDown step_down, const StandbyPorts& ports) {
  if (options.name.empty()) options.name = HostName();
  StandbyService standby(options.name);
  grpc::ServerBuilder builder;
  int selected_port = 0;
  if (!ports.listen.empty()) {
    builder.AddListeningPort(ports.listen, ports.tcp_credentials,
                             &selected_port);
  }
  if (!ports.socket.empty()) {
    builder.AddListeningPort("unix:" + ports.socket,
                             grpc::InsecureServerCredentials());
  }
  builder.RegisterCallbackGenericService(&standby);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || (!ports.listen.empty() && selected_port == 0)) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", ports.listen, " ", ports.socket));
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
  log::Info("standby serving", {{"name", options.name},
                                {"address", options.address},
                                {"socket", ports.socket}});
  absl::Status leading = (*controller)->WaitUntilLeader(standby);
  server->Shutdown();
  server->Wait();
  if (!leading.ok()) return leading;
  elected.controller = std::move(*controller);
  return elected;
}

}  // namespace gantry::replication
