#include "agent/preflight/preflight_check.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/preflight/bounded_command.h"
#include "agent/preflight/preflight_wire.h"

namespace gantry::agent {
namespace {

using Clock = std::chrono::steady_clock;

// The last non-empty line of a command's output, shortened: enough to say
// why it failed in a drain reason.
std::string LastLine(const std::string& output) {
  std::vector<std::string> lines =
      absl::StrSplit(output, '\n', absl::SkipWhitespace());
  if (lines.empty()) return "";
  std::string last(absl::StripAsciiWhitespace(lines.back()));
  if (last.size() > 160) last = last.substr(0, 157) + "...";
  return last;
}

std::string Describe(const BoundedCommandResult& result, double seconds) {
  if (result.timed_out) {
    return absl::StrCat("did not finish within ", seconds, " s");
  }
  std::string text = result.signal != 0
                         ? absl::StrCat("killed by signal ", result.signal)
                         : absl::StrCat("exited with code ", result.exit_code);
  const std::string last = LastLine(result.output);
  if (!last.empty()) absl::StrAppend(&text, ": ", last);
  return text;
}

double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::max(0.0, std::chrono::duration<double>(to - from).count());
}

// The variables a site command and the gloo script see.
std::map<std::string, std::string> CheckEnvironment(
    const v1::PreflightCheck& check, const PreflightNode& node,
    Clock::time_point deadline) {
  std::map<std::string, std::string> environment = CurrentEnvironment();
  std::vector<std::string> names, addresses;
  for (const v1::PreflightPeer& peer : check.peers()) {
    names.push_back(peer.node());
    addresses.push_back(peer.address());
  }
  environment["GANTRY_PREFLIGHT_JOB_ID"] = absl::StrCat(check.job_id());
  environment["GANTRY_PREFLIGHT_NODE"] = node.node_name;
  environment["GANTRY_PREFLIGHT_NODES"] = absl::StrJoin(names, ",");
  environment["GANTRY_PREFLIGHT_ADDRESSES"] = absl::StrJoin(addresses, ",");
  environment["GANTRY_PREFLIGHT_INDEX"] = absl::StrCat(check.index());
  environment["GANTRY_PREFLIGHT_COUNT"] = absl::StrCat(check.peers_size());
  environment["GANTRY_PREFLIGHT_SECONDS"] =
      absl::StrCat(std::max(1.0, SecondsBetween(Clock::now(), deadline)));
  return environment;
}

// The ring part: the send to the successor on its own thread, the receive
// from the predecessor through the listener, both by `deadline`.
void RunRing(const v1::PreflightCheck& check, const PreflightNode& node,
             Clock::time_point deadline, v1::PreflightResult& result) {
  const int n = check.peers_size();
  if (n < 2) return;
  if (node.listener == nullptr) {
    result.set_send_problem("this agent has no pre-flight listener");
    result.set_receive_problem("this agent has no pre-flight listener");
    return;
  }
  // The predecessor's transfer is taken from now on (a sender that came
  // earlier tries again).
  node.listener->Expect(check.token(), deadline);
  const v1::PreflightPeer& next = check.peers((check.index() + 1) % n);
  absl::StatusOr<PreflightSendFigures> sent = absl::UnknownError("not sent");
  std::thread sender([&] {
    sent = SendPreflight(
        next.address(), next.port(),
        {.token = check.token(), .bytes = check.transfer_bytes()}, deadline);
  });
  std::optional<PreflightListener::Received> received =
      node.listener->WaitFor(check.token(), deadline);
  sender.join();
  if (sent.ok()) {
    result.set_send_mbps(sent->mbps);
    result.set_round_trip_us(sent->round_trip_us);
  } else {
    result.set_send_problem(std::string(sent.status().message()));
    result.set_send_not_taken(absl::IsAborted(sent.status()));
  }
  if (!received) {
    result.set_receive_problem("nothing arrived from " +
                               check.peers((check.index() + n - 1) % n).node() +
                               " in time");
  } else if (!received->problem.empty()) {
    result.set_receive_problem(received->problem);
  } else {
    result.set_receive_mbps(received->mbps);
  }
}

void RunGloo(const v1::PreflightCheck& check, const PreflightNode& node,
             Clock::time_point deadline, const std::atomic<bool>& cancelled,
             v1::PreflightResult& result) {
  if (!check.gloo() || node.torch_python.empty() || check.peers_size() < 2) {
    return;
  }
  std::map<std::string, std::string> environment =
      CheckEnvironment(check, node, deadline);
  environment["RANK"] = absl::StrCat(check.index());
  environment["WORLD_SIZE"] = absl::StrCat(check.peers_size());
  environment["MASTER_ADDR"] = check.peers(0).address();
  environment["MASTER_PORT"] = absl::StrCat(check.gloo_port());
  const Clock::time_point began = Clock::now();
  absl::StatusOr<BoundedCommandResult> ran =
      RunBoundedCommand({node.torch_python, "-c", kGlooAllReduceScript},
                        environment, deadline, cancelled);
  if (!ran.ok()) {
    result.set_gloo_problem(std::string(ran.status().message()));
    return;
  }
  double mbps = 0;
  for (absl::string_view line : absl::StrSplit(ran->output, '\n')) {
    if (absl::ConsumePrefix(&line, "busbw_mbps ")) {
      (void)absl::SimpleAtod(line, &mbps);
    }
  }
  if (ran->timed_out || ran->exit_code != 0 || ran->signal != 0 || mbps <= 0) {
    result.set_gloo_problem(absl::StrCat(
        "gloo all-reduce ", Describe(*ran, SecondsBetween(began, deadline))));
    return;
  }
  result.set_gloo_mbps(mbps);
}

void RunSiteCommand(const v1::PreflightCheck& check, const PreflightNode& node,
                    Clock::time_point deadline,
                    const std::atomic<bool>& cancelled,
                    v1::PreflightResult& result) {
  if (check.site_command().empty()) return;
  const Clock::time_point began = Clock::now();
  absl::StatusOr<BoundedCommandResult> ran = RunBoundedCommand(
      {"/bin/sh", "-c", check.site_command()},
      CheckEnvironment(check, node, deadline), deadline, cancelled);
  if (!ran.ok()) {
    result.set_passed(false);
    result.set_problem(absl::StrCat("site check: ", ran.status().message()));
    return;
  }
  if (ran->timed_out || ran->exit_code != 0 || ran->signal != 0) {
    result.set_passed(false);
    result.set_problem(absl::StrCat(
        "site check ", Describe(*ran, SecondsBetween(began, deadline))));
    return;
  }
  result.set_site_mbps(ParseBusBandwidthMbps(ran->output));
}

}  // namespace

const char kGlooAllReduceScript[] = R"py(
import datetime, os, sys, time
import torch
import torch.distributed as dist
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
seconds = float(os.environ.get("GANTRY_PREFLIGHT_SECONDS", "30"))
dist.init_process_group(
    "gloo",
    init_method="tcp://%s:%s" % (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]),
    rank=rank, world_size=world, timeout=datetime.timedelta(seconds=seconds))
elements = 1 << 18
tensor = torch.ones(elements)
dist.all_reduce(tensor)
if abs(float(tensor[0]) - world) > 1e-3:
    print("all-reduce gave %s, not %d" % (float(tensor[0]), world))
    sys.exit(3)
rounds = 5
start = time.perf_counter()
for _ in range(rounds):
    dist.all_reduce(tensor)
elapsed = (time.perf_counter() - start) / rounds
dist.barrier()
dist.destroy_process_group()
print("busbw_mbps %.1f" % (elements * 4 * 2.0 * (world - 1) / world / elapsed / 1e6))
)py";

double ParseBusBandwidthMbps(const std::string& output) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    absl::ConsumePrefix(&line, "#");
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "Avg bus bandwidth")) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    double gbps = 0;
    if (absl::SimpleAtod(absl::StripAsciiWhitespace(line.substr(colon + 1)),
                         &gbps) &&
        gbps > 0) {
      return gbps * 1000;
    }
  }
  return 0;
}

std::string FindTorchPython() {
  const std::string python = "/usr/bin/python3";
  std::atomic<bool> never{false};
  // Only whether torch is installed: importing it takes seconds, which
  // the check itself pays (and reports as a gloo problem if it fails).
  absl::StatusOr<BoundedCommandResult> ran = RunBoundedCommand(
      {python, "-c",
       "import importlib.util, sys; "
       "sys.exit(0 if importlib.util.find_spec('torch') else 1)"},
      CurrentEnvironment(), Clock::now() + std::chrono::seconds(10), never);
  if (!ran.ok() || ran->timed_out || ran->exit_code != 0 || ran->signal != 0) {
    return "";
  }
  return python;
}

v1::PreflightResult RunPreflightCheck(const v1::PreflightCheck& check,
                                      const PreflightNode& node,
                                      const std::atomic<bool>& cancelled) {
  const Clock::time_point began = Clock::now();
  const auto timeout = std::chrono::milliseconds(check.timeout_ms());
  const Clock::time_point deadline = began + timeout;
  v1::PreflightResult result;
  result.set_job_id(check.job_id());
  result.set_attempt(check.attempt());
  result.set_passed(true);
  std::vector<std::string> problems = node.health_problems
                                          ? node.health_problems()
                                          : std::vector<std::string>{};
  if (!problems.empty()) {
    result.set_passed(false);
    result.set_problem("unhealthy: " + absl::StrJoin(problems, "; "));
  }
  // The ring gets half the time, so that a peer that never sends still
  // leaves this node time for its own checks.
  RunRing(check, node, began + timeout / 2, result);
  RunGloo(check, node, deadline, cancelled, result);
  if (result.passed()) {
    RunSiteCommand(check, node, deadline, cancelled, result);
  }
  result.set_elapsed_ms(static_cast<uint32_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                            began)
          .count()));
  return result;
}

}  // namespace gantry::agent
