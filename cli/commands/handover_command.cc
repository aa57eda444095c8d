#include "cli/commands/handover_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"

namespace gantry::cli {
namespace {

constexpr char kCommand[] = "handover";
// How long the successor may take to answer as the leader (its catch-up
// is bounded by the lag the leader accepts; an election after a failed
// one takes a lease's TTL).
constexpr auto kSuccessorWait = std::chrono::seconds(15);

// The controller that leads now, per the controllers themselves (empty:
// none answers as leader).
std::string LeaderNow(ControllerClient& client) {
  v1::ClusterStatusResponse status;
  if (!client.ClusterStatus(status).ok()) return "";
  return status.replication().leader();
}

}  // namespace

absl::StatusOr<std::string> ResolveStandby(
    const v1::ReplicationStatus& replication, const std::string& standby) {
  // A controller alone refuses the hand-over itself, saying why.
  if (!replication.enabled()) return standby;
  std::vector<std::string> standbys;
  for (const v1::ControllerMember& member : replication.controllers()) {
    if (member.name() == standby) return standby;
    if (member.role() == "standby") standbys.push_back(member.name());
  }
  uint32_t position = 0;
  if (standby.empty() || !absl::SimpleAtoi(standby, &position) ||
      !std::all_of(standby.begin(), standby.end(), absl::ascii_isdigit)) {
    return standby;
  }
  std::sort(standbys.begin(), standbys.end());
  if (position == 0 || position > standbys.size()) {
    return absl::NotFoundError(absl::StrCat(
        "there is no standby number ", standby, "; the standbys are ",
        standbys.empty() ? "none" : absl::StrJoin(standbys, ", ")));
  }
  return standbys[position - 1];
}

int RunHandoverCommand(const std::string& controller,
                       const std::string& standby) {
  ControllerClient client(ResolveControllerTarget(controller));
  v1::ClusterStatusResponse status;
  if (absl::Status asked = client.ClusterStatus(status); !asked.ok()) {
    return Fail(kCommand, asked);
  }
  absl::StatusOr<std::string> successor =
      ResolveStandby(status.replication(), standby);
  if (!successor.ok()) return Fail(kCommand, successor.status());
  const std::string leader = status.replication().leader();
  v1::HandoverRequest request;
  request.set_user(CurrentUser());
  request.set_successor(*successor);
  request.set_leader(leader);
  const auto asked_at = std::chrono::steady_clock::now();
  v1::HandoverResponse response;
  absl::Status handed = client.Handover(request, response);
  if (!handed.ok()) {
    // The leader may have handed over and re-executed before its answer
    // got out (the retry then reached the successor, which refused): the
    // controllers say whether leadership moved.
    const std::string now = leader.empty() ? "" : LeaderNow(client);
    if (now.empty() || now == leader) return Fail(kCommand, handed);
    response.set_leader(leader);
    response.set_successor(now);
  }
  // Done once the successor answers as the leader.
  const auto give_up = asked_at + kSuccessorWait;
  std::string now;
  while ((now = LeaderNow(client)) != response.successor() &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - asked_at)
          .count();
  if (now != response.successor()) {
    std::cerr << "gantry handover: error: " << response.leader()
              << " handed leadership to " << response.successor()
              << ", which does not answer as the leader after "
              << static_cast<int>(seconds) << " s; the leader is "
              << (now.empty() ? "unknown" : now)
              << " (gantry status shows the controllers)\n";
    return 1;
  }
  char took[32];
  std::snprintf(took, sizeof(took), "%.2f", seconds);
  std::cout << response.leader() << " handed leadership to "
            << response.successor()
            << (response.successor_address().empty()
                    ? ""
                    : absl::StrCat(" (", response.successor_address(), ")"))
            << ", which answers as the leader after " << took << " s\n";
  return 0;
}

void AddHandoverCommand(CommandTable& commands) {
  CLI::App* handover = commands.app().add_subcommand(
      "handover",
      "Admin: the leading controller hands leadership to a standby, e.g. "
      "before an upgrade (scontrol takeover)");
  auto standby = std::make_shared<std::string>();
  handover->add_option("STANDBY", *standby,
                       "The standby's name, or its position (1, 2, ...) "
                       "among the standbys in name order (default: the most "
                       "caught-up one)");
  commands.Add(handover, [standby](const std::string& controller) {
    return RunHandoverCommand(controller, *standby);
  });
}

}  // namespace gantry::cli
