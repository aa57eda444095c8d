// gantryd: parses flags (and the same keys from --config), opens the state
// database, and wires the controller to its gRPC front ends.
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <prometheus/registry.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "absl/strings/str_cat.h"
#include "common/cluster_name.h"
#include "common/crash_point.h"
#include "common/daemon_start.h"
#include "common/hostlist.h"
#include "common/log.h"
#include "common/metrics_endpoint.h"
#include "common/request_limits.h"
#include "common/systemd_notify.h"
#include "common/tls_credentials.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/core/controller_metrics.h"
#include "daemon/controller/core/submission_size.h"
#include "daemon/controller/features/standard_features.h"
#include "daemon/controller/loop_watchdog.h"
#include "daemon/gantryd_flags.h"
#include "daemon/replication/handover.h"
#include "daemon/replication/replication_status.h"
#include "daemon/replication/snapshot_install.h"
#include "daemon/replication/snapshot_service.h"
#include "daemon/replication/standby_phase.h"
#include "daemon/replication/step_down.h"
#include "daemon/rpc/grpc_services.h"
#include "daemon/rpc/leadership_fence.h"
#include "daemon/rpc/rpc_metrics_interceptor.h"
#include "daemon/scheduler/fabric_parts.h"
#include "daemon/scheduler/partition_config.h"
#include "daemon/scheduler/straggler_detector.h"
#include "daemon/store/rocksdb_store.h"
#include "daemon/store/state_dir.h"

namespace {

int RunGantryd(int argc, char** argv) {
  if (std::optional<int> exit_code =
          gantry::BeginDaemon("gantryd", gantry::kControllerCrashPoints)) {
    return *exit_code;
  }
  gantry::DaemonCommandLine command_line(
      "gantryd", "controller",
      "gantryd: the Gantry controller. Keeps jobs and nodes in RocksDB, "
      "schedules jobs as gangs, and serves the gantry CLI and the agents.");
  gantry::GantrydFlags flags;
  gantry::AddGantrydFlags(command_line.app(), flags);
  if (std::optional<int> exit_code = command_line.Parse(argc, argv)) {
    return *exit_code;
  }
  if (flags.node_timeout < 2 * flags.heartbeat_interval) {
    std::cerr << "gantryd: --node-timeout (" << flags.node_timeout
              << " s) must be at least twice --heartbeat-interval ("
              << flags.heartbeat_interval
              << " s), or healthy nodes would be declared down\n";
    return 2;
  }
  if (absl::Status valid =
          gantry::CheckSlurmName("--cluster-name", flags.cluster_name);
      !valid.ok()) {
    std::cerr << "gantryd: " << valid.message() << "\n";
    return 2;
  }
  if (!flags.default_account.empty()) {
    if (absl::Status valid =
            gantry::CheckSlurmName("--default-account", flags.default_account);
        !valid.ok()) {
      std::cerr << "gantryd: " << valid.message() << "\n";
      return 2;
    }
  }
  if (absl::Status valid = gantry::CheckMetricsListen(flags.metrics_listen);
      !valid.ok()) {
    std::cerr << "gantryd: --metrics-listen: " << valid.message() << "\n";
    return 2;
  }
  absl::StatusOr<std::vector<gantry::PartitionConfig>> partitions =
      gantry::ParsePartitions(flags.partitions);
  if (!partitions.ok()) {
    std::cerr << "gantryd: " << partitions.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> tcp_credentials =
      gantry::ServerCredentialsFromFiles(flags.tls_cert, flags.tls_key);
  if (!tcp_credentials.ok()) {
    std::cerr << "gantryd: " << tcp_credentials.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<gantry::Authenticator> authenticator =
      gantry::Authenticator::Create({.use_munge = flags.auth == "munge",
                                     .munge_socket = flags.munge_socket,
                                     .admin_group = flags.admin_group});
  if (!authenticator.ok()) {
    std::cerr << "gantryd: --admin-group: " << authenticator.status().message()
              << "\n";
    return 2;
  }
  if (authenticator->uses_munge()) {
    // Without munged every request would be refused: say so now, not at
    // the first request.
    absl::Status munge = authenticator->CheckMunged();
    if (!munge.ok()) {
      std::cerr << "gantryd: " << munge.message()
                << "; start munged, set --munge-socket, or (development "
                   "only) --auth=none\n";
      return 1;
    }
  } else {
    gantry::log::Warn(
        "authentication is off (--auth=none): any client can act as any "
        "user, and any process can serve a node");
  }
  gantry::RestrictFileCreationMask();
  if (absl::Status state_dir = gantry::PrepareStateDirectory(flags.state_dir);
      !state_dir.ok()) {
    std::cerr << "gantryd: " << state_dir.message() << "\n";
    return 1;
  }
  if (!flags.etcd.empty()) {
    // A standby that fetched a copy of the leader's state restarted to put
    // it in place of its database (daemon/replication/snapshot_install.h).
    absl::StatusOr<bool> installed = gantry::replication::FinishSnapshotInstall(
        gantry::replication::SnapshotPaths(flags.state_dir));
    if (!installed.ok()) {
      gantry::log::Error("cannot install the copy of the leader's state",
                         {{"error", installed.status().ToString()}});
      return 1;
    }
  }
  absl::StatusOr<std::unique_ptr<gantry::RocksDbStore>> store =
      gantry::RocksDbStore::Open(flags.state_dir + "/db");
  if (!store.ok()) {
    gantry::log::Error("cannot open state",
                       {{"error", store.status().ToString()}});
    return 1;
  }
  if (!flags.socket.empty()) {
    if (absl::Status socket_dir = gantry::CreateSharedDirectory(
            std::filesystem::path(flags.socket).parent_path().string());
        !socket_dir.ok()) {
      std::cerr << "gantryd: --socket: " << socket_dir.message() << "\n";
      return 1;
    }
  }
  // The metrics endpoint serves from the start: a standby exports its
  // replication lag there, and the controller's metrics join them once
  // it leads. Scheduling goes on without its monitoring port: an
  // unreachable endpoint shows as a down target in Prometheus, and the
  // error logged says why.
  auto metrics_registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<gantry::MetricsEndpoint> metrics_endpoint =
      gantry::MetricsEndpoint::StartOrLogError(flags.metrics_listen,
                                               metrics_registry);
  gantry::StateStore* state = store->get();
  std::unique_ptr<gantry::replication::ReplicatedController> replicated;
  gantry::replication::Elected standby_ports;  // closed once we listen
  if (!flags.etcd.empty()) {
    // One of several controllers: a standby until elected (this blocks),
    // then the leader on a store that replicates through etcd.
    absl::StatusOr<gantry::replication::Elected> elected =
        gantry::replication::StandUntilElected(
            {.etcd_endpoints = flags.etcd,
             .etcd_tls = {.ca_path = flags.etcd_ca,
                          .cert_path = flags.etcd_cert,
                          .key_path = flags.etcd_key,
                          .insecure = flags.etcd_insecure},
             .replication_key = flags.replication_key,
             .prefix = flags.etcd_prefix,
             .name = flags.name,
             .address = flags.advertise,
             .lease_ttl_seconds = flags.lease_ttl,
             .state_dir = flags.state_dir,
             .peer_tls = {.ca_path = flags.tls_ca, .server_name = ""},
             .log_retain = flags.log_retain,
             .truncate_interval = std::chrono::milliseconds(
                 static_cast<int64_t>(flags.log_truncate_interval * 1000))},
            **store,
            [argv](const std::string& reason) {
              gantry::replication::StepDown(argv, reason);
            },
            {.listen = flags.listen,
             .socket = flags.socket,
             .tcp_credentials = *tcp_credentials},
            metrics_registry.get());
    if (!elected.ok()) {
      // Also a refusal to start: etcd without TLS, endpoints of several
      // etcd clusters, TLS files that do not fit.
      gantry::log::Error("cannot run as one of several controllers",
                         {{"error", elected.status().ToString()}});
      return 1;
    }
    replicated = std::move(elected->controller);
    state = &replicated->store();
    flags.listen = elected->listen;
    standby_ports = std::move(*elected);
    gantry::SetLeadershipFence([leadership = &replicated->leadership()] {
      return leadership->Valid();
    });
  }

  boost::asio::io_context io;
  gantry::RealClock clock;
  gantry::ControllerMetrics controller_metrics(*metrics_registry);
  gantry::ControllerOptions options;
  options.metrics = &controller_metrics;
  if (replicated) {
    options.may_act = [leadership = &replicated->leadership()] {
      return leadership->Valid();
    };
  }
  options.state_dir = flags.state_dir;
  options.cluster_name = flags.cluster_name;
  options.default_account = flags.default_account;
  options.partitions = std::move(*partitions);
  constexpr double kHourMs = 3600.0 * 1000;
  options.priority_weights = gantry::PriorityWeights{
      .age_weight = flags.priority_weight_age,
      .size_weight = flags.priority_weight_job_size,
      .fair_share_weight = flags.priority_weight_fairshare,
      .age_max_ms =
          static_cast<int64_t>(flags.priority_max_age_hours * kHourMs),
      .size_norm_gpus = 512,
      .half_life_ms =
          static_cast<int64_t>(flags.priority_decay_half_life_hours * kHourMs),
  };
  options.heartbeat_interval_ms =
      static_cast<int64_t>(flags.heartbeat_interval * 1000);
  options.node_timeout_ms = static_cast<int64_t>(flags.node_timeout * 1000);
  options.reconnect_grace_ms =
      static_cast<int64_t>(flags.reconnect_grace * 1000);
  options.inactive_limit_ms = static_cast<int64_t>(flags.inactive_limit * 1000);
  options.kill_grace_seconds = flags.kill_grace;
  options.default_max_restarts = flags.max_restarts;
  options.restart_backoff_ms =
      static_cast<int64_t>(flags.restart_backoff * 1000);
  options.min_job_age_ms = static_cast<int64_t>(flags.min_job_age * 1000);
  options.history_retention_ms =
      static_cast<int64_t>(flags.history_retention_days * 24 * 3600 * 1000);
  absl::StatusOr<std::vector<std::string>> spares =
      gantry::ExpandHostlist(flags.hot_spares);
  if (!spares.ok()) {
    std::cerr << "gantryd: --hot-spares: " << spares.status().message() << "\n";
    return 2;
  }
  options.hot_spares = {spares->begin(), spares->end()};
  options.unlisted_nodes =
      *gantry::ParseUnlistedNodes(flags.unlisted_nodes);  // checked
  gantry::FeatureSettings features;
  features.checkpoint_interval.node_mtbf_hours = flags.node_mtbf_hours;
  features.checkpoint_interval.checkpoint_cost_seconds = flags.checkpoint_cost;
  features.stage_ahead.window_ms =
      static_cast<int64_t>(flags.stage_ahead * 1000);
  gantry::PreflightOptions& preflight = features.preflight;
  preflight.mode = *gantry::ParsePreflightMode(flags.preflight);  // checked
  preflight.timeout_ms = static_cast<int64_t>(flags.preflight_timeout * 1000);
  preflight.slow_factor = flags.preflight_slow_factor;
  preflight.transfer_bytes =
      static_cast<uint64_t>(flags.preflight_megabytes * 1024 * 1024);
  preflight.site_command = flags.preflight_command;
  preflight.gloo = flags.preflight_gloo == "auto";
  gantry::StragglerSettings& stragglers = features.stragglers;
  stragglers.response =
      *gantry::ParseStragglerResponse(flags.straggler_policy);  // checked
  stragglers.policy.slow_factor = flags.straggler_factor;
  stragglers.policy.min_duration_ms =
      static_cast<int64_t>(flags.straggler_duration * 1000);
  stragglers.policy.min_peers = flags.straggler_min_peers;
  // A node not heard from in a few heartbeats is not judged, nor a peer.
  stragglers.policy.stale_ms =
      std::max<int64_t>(5000, options.heartbeat_interval_ms * 5);
  stragglers.heartbeat_interval_ms = options.heartbeat_interval_ms;
  features.fault_survivors.settle_ms =
      static_cast<int64_t>(flags.node_fault_settle * 1000);
  features.fault_survivors.heartbeat_interval_ms =
      options.heartbeat_interval_ms;
  options.features = gantry::StandardFeatures(features);
  gantry::Controller controller(io, *state, clock, options);
  absl::Status started = controller.Start();
  if (!started.ok()) {
    gantry::log::Error("cannot load state", {{"error", started.ToString()}});
    return 1;
  }

  gantry::ClientServiceImpl client_service(io, controller, *authenticator,
                                           flags.max_pending_submissions);
  std::unique_ptr<gantry::replication::ReplicationStatusSource>
      replication_status;
  std::unique_ptr<gantry::replication::Handover> handover;
  if (replicated) {
    replication_status =
        std::make_unique<gantry::replication::ReplicationStatusSource>(
            *replicated);
    client_service.SetReplicationStatus(
        [source = replication_status.get()] { return source->Get(); });
    handover = std::make_unique<gantry::replication::Handover>(
        *replicated, [argv](const std::string& reason) {
          gantry::replication::StepDown(argv, reason);
        });
    client_service.SetHandover(
        [handover = handover.get()](
            const gantry::v1::HandoverRequest& request,
            gantry::ClientServiceImpl::HandoverAnswer answer) {
          handover->Start(request, std::move(answer));
        });
  }
  gantry::AgentServiceImpl agent_service(
      io, controller, *authenticator,
      gantry::AgentStreamLimitsFor(options.heartbeat_interval_ms,
                                   flags.agent_messages_per_heartbeat,
                                   flags.agent_max_message_bytes));
  grpc::ServerBuilder builder;
  int selected_port = 0;
  if (!flags.listen.empty()) {
    builder.AddListeningPort(flags.listen, *tcp_credentials, &selected_port);
  }
  if (!flags.socket.empty()) {
    builder.AddListeningPort("unix:" + flags.socket,
                             grpc::InsecureServerCredentials());
  }
  builder.RegisterService(&client_service);
  builder.RegisterService(&agent_service);
  // A standby too far behind the log copies this leader's state.
  std::unique_ptr<gantry::replication::SnapshotService> snapshot_service;
  if (replicated) {
    snapshot_service = std::make_unique<gantry::replication::SnapshotService>(
        **store, flags.state_dir);
    snapshot_service->SetToken(replicated->snapshot_token());
    builder.RegisterService(snapshot_service.get());
  }
  // Clients' requests (a job script, a fabric dump): any acceptable
  // submission fits, and gRPC refuses a larger request before allocating
  // it (daemon/controller/submission_size.h). Agent streams have their own,
  // smaller limit (--agent-max-message-bytes).
  builder.SetMaxReceiveMessageSize(
      std::max<int>(static_cast<int>(gantry::limits::kMaxClientRequestBytes),
                    static_cast<int>(flags.agent_max_message_bytes)));
  // Agents' messages are small and steady: bandwidth-delay probing only
  // added a ping round trip for every heartbeat (twice the reads).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // gantryd does not ping its peers (agents ping it, and a silent node is
  // found by its missing heartbeats). With the server-side keepalive timer
  // on, gRPC cancelled and re-armed it on every read: two walks of its
  // timer table per heartbeat (Debian's gRPC keeps that debug table).
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, INT_MAX);
  if (replicated) {
    // Clients and agents of several controllers ping every second or two
    // to notice a frozen leader (cli/client/controller_client.cc,
    // agent/link/controller_link.cc): allow it, where gRPC would answer pings
    // closer than five minutes apart without data with GOAWAY.
    builder.AddChannelArgument(
        GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  }
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  const std::string agent_stream_path = absl::StrCat(
      "/", gantry::v1::AgentService::service_full_name(), "/Connect");
  const std::string submit_stream_path = absl::StrCat(
      "/", gantry::v1::ClientService::service_full_name(), "/SubmitStream");
  auto rpc_metrics = std::make_unique<gantry::RpcMetricsInterceptorFactory>(
      *metrics_registry,
      gantry::RpcMethodPaths({gantry::v1::ClientService::service_full_name(),
                              gantry::v1::AgentService::service_full_name()}),
      std::set<std::string>{agent_stream_path, submit_stream_path});
  agent_service.OnStreamFinished(
      [metrics = rpc_metrics.get(), agent_stream_path](grpc::StatusCode code) {
        metrics->CountHandled(agent_stream_path, code);
      });
  client_service.OnSubmitStreamFinished(
      [metrics = rpc_metrics.get(), submit_stream_path](grpc::StatusCode code) {
        metrics->CountHandled(submit_stream_path, code);
      });
  interceptors.push_back(std::move(rpc_metrics));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || (!flags.listen.empty() && selected_port == 0)) {
    gantry::log::Error("cannot listen",
                       {{"listen", flags.listen}, {"socket", flags.socket}});
    return 1;
  }
  if (!flags.socket.empty()) chmod(flags.socket.c_str(), 0666);
  standby_ports.CloseStandbyPorts();
  std::string host = flags.listen.substr(0, flags.listen.rfind(':'));
  gantry::log::Info(
      "gantryd ready",
      {{"version", GANTRY_VERSION},
       {"listen", host + ":" + std::to_string(selected_port)},
       {"tcp", flags.tls_cert.empty() ? "plain" : "tls"},
       {"socket", flags.socket},
       {"metrics", metrics_endpoint ? metrics_endpoint->address() : ""},
       {"state_dir", flags.state_dir},
       {"pid", static_cast<int>(getpid())}});

  // Under systemd (Type=notify): ready now that the listeners serve; the
  // watchdog pings from the controller's own loop, so a stuck loop gets
  // the daemon restarted.
  gantry::systemd::NotifyReady(
      "serving on " + host + ":" + std::to_string(selected_port) +
      (flags.socket.empty() ? "" : " and ") + flags.socket);
  gantry::LoopWatchdog watchdog(io, gantry::systemd::WatchdogPingInterval(),
                                gantry::systemd::NotifyWatchdog);
  watchdog.Start();

  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  std::thread stopper;
  signals.async_wait([&](const boost::system::error_code&, int signal) {
    gantry::log::Info("stopping", {{"signal", signal}});
    gantry::systemd::NotifyStopping("stopping");
    gantry::replication::StopInsteadOfSteppingDown();
    controller.Stop();
    // Shutdown waits for in-flight calls, which need this loop: run it from
    // another thread and stop the loop when it returns.
    stopper = std::thread([&] {
      server->Shutdown(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
      io.stop();
    });
  });
  io.run();
  if (stopper.joinable()) stopper.join();
  // A clean stop hands over at once instead of after the lease's TTL.
  if (replicated) replicated->leadership().Resign();
  gantry::log::Info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing is meant to throw this far; if something does, it is said
  // (the journal keeps it) and gantryd exits for systemd to restart it,
  // rather than aborting with no word of what was thrown.
  try {
    return RunGantryd(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "gantryd: stopped by an unexpected error: " << error.what()
              << "\n";
  } catch (...) {
    std::cerr << "gantryd: stopped by an unexpected error\n";
  }
  return 1;
}
