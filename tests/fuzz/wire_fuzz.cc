// Fuzzes what crosses the wire into gantryd: arbitrary bytes parsed as the
// requests a client sends (Submit, SubmitStream's submissions, Cancel,
// Hold, Requeue, UpdateJob, LaunchStep, ReportProgress, Drain) and as agent
// stream messages,
// driven through the real Controller (validation, state machine,
// scheduling, persistence into an in-memory store) on a fake clock, the
// agent messages through the same stream guard the server puts in front of
// the loop.
//
// Input: a sequence of records, each one byte of kind, one byte of
// caller, two bytes of length (little-endian) and that many bytes of the
// message. Whatever parses is applied; a crash, an abort (a broken
// invariant inside the controller) or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/clock.h"
#include "common/log.h"
#include "daemon/controller/controller.h"
#include "daemon/controller/core/agent_link.h"
#include "daemon/controller/core/request_validation.h"
#include "daemon/controller/features/standard_features.h"
#include "daemon/rpc/agent_stream_guard.h"
#include "daemon/store/state_store.h"
#include "tests/unit/support/memory_store.h"

namespace gantry {
namespace {

class SilentLink final : public AgentLink {
 public:
  void Send(const v1::ControllerMessage&) override {}
  void Close() override { closed_ = true; }
  void Close(const absl::Status&) override { closed_ = true; }
  std::string Peer() const override { return "fuzz"; }
  bool closed() const { return closed_; }

 private:
  bool closed_ = false;
};

enum Kind : uint8_t {
  kSubmit,
  kCancel,
  kHold,
  kLaunchStep,
  kReportProgress,
  kDrain,
  kAgentMessage,
  kAgentGone,
  kTick,
  kRequeue,
  kUpdateJob,
  kEndAllocation,
  kKeepAllocation,
  kKindCount,
};

struct World {
  World() : controller(io, store, clock, Options()) {
    if (!controller.Start().ok()) std::abort();
  }
  static ControllerOptions Options() {
    ControllerOptions options;
    options.reconnect_grace_ms = 0;
    // Short enough for a few ticks to move finished jobs to the history
    // and expire them, so that path is fuzzed too.
    options.min_job_age_ms = 1000;
    options.history_retention_ms = 60'000;
    options.features = StandardFeatures();
    return options;
  }
  boost::asio::io_context io;
  MemoryStore store;
  FakeClock clock;
  Controller controller;
  // Agent streams by slot: a guard and a link each, as the server has.
  std::map<uint8_t, std::shared_ptr<SilentLink>> links;
  std::map<uint8_t, std::unique_ptr<AgentStreamGuard>> guards;
};

Caller CallerFor(uint8_t byte) {
  switch (byte % 3) {
    case 0:
      return Caller{.uid = 1000, .gid = 1000, .user = "alice"};
    case 1:
      return Caller{.uid = 1001, .gid = 1001, .user = "bob"};
    default:
      return Caller{.uid = 0, .gid = 0, .user = "root", .admin = true};
  }
}

template <typename Message>
bool Parse(const uint8_t* data, size_t size, Message& message) {
  return message.ParseFromArray(data, static_cast<int>(size));
}

void Apply(World& world, uint8_t kind, uint8_t who, const uint8_t* data,
           size_t size) {
  Controller& controller = world.controller;
  const Caller caller = CallerFor(who);
  switch (static_cast<Kind>(kind % kKindCount)) {
    case kSubmit: {
      v1::SubmitRequest request;
      if (!Parse(data, size, request)) return;
      controller.Submit(std::move(request), caller,
                        [](absl::StatusOr<JobId>) {});
      break;
    }
    case kCancel: {
      v1::CancelRequest request;
      if (!Parse(data, size, request)) return;
      controller.Cancel(request, caller, [](v1::CancelResponse) {});
      break;
    }
    case kHold: {
      v1::HoldRequest request;
      if (!Parse(data, size, request)) return;
      controller.Hold(request, caller, [](v1::HoldResponse) {});
      break;
    }
    case kRequeue: {
      v1::RequeueRequest request;
      if (!Parse(data, size, request)) return;
      controller.Requeue(request, caller, [](v1::RequeueResponse) {});
      break;
    }
    case kUpdateJob: {
      v1::UpdateJobRequest request;
      if (!Parse(data, size, request)) return;
      controller.UpdateJob(request, caller, [](v1::UpdateJobResponse) {});
      break;
    }
    case kLaunchStep: {
      v1::LaunchStepRequest request;
      if (!Parse(data, size, request)) return;
      // The server's handler checks the fields before the loop sees them.
      if (!ValidateLaunchStepRequestFields(request).ok()) return;
      controller.LaunchStep(request, caller,
                            [](absl::StatusOr<v1::LaunchStepResponse>) {});
      break;
    }
    case kEndAllocation: {
      v1::EndAllocationRequest request;
      if (!Parse(data, size, request)) return;
      controller.EndAllocation(request, caller, [](absl::Status) {});
      break;
    }
    case kKeepAllocation: {
      v1::KeepAllocationRequest request;
      if (!Parse(data, size, request)) return;
      (void)controller.KeepAllocation(request, caller);
      break;
    }
    case kReportProgress: {
      v1::ReportProgressRequest request;
      if (!Parse(data, size, request)) return;
      // The server's handler checks the fields before the loop sees them.
      if (!ValidateReportProgressRequest(request).ok()) return;
      controller.ReportProgress(request, caller, [](absl::Status) {});
      break;
    }
    case kDrain: {
      v1::DrainRequest request;
      if (!Parse(data, size, request)) return;
      // The server's handler checks the fields before the loop sees them.
      if (!ValidateDrainRequest(request).ok()) return;
      controller.Drain(request, caller, [](absl::Status) {});
      break;
    }
    case kAgentMessage: {
      v1::AgentMessage message;
      if (!Parse(data, size, message)) return;
      const uint8_t slot = who % 4;
      std::shared_ptr<SilentLink>& link = world.links[slot];
      std::unique_ptr<AgentStreamGuard>& guard = world.guards[slot];
      if (!link || link->closed()) {
        link = std::make_shared<SilentLink>();
        guard = std::make_unique<AgentStreamGuard>(
            AgentStreamLimitsFor(1000, 64, 4 << 20), world.clock.NowMs());
      }
      // What the server does: the guard first; a refused message cuts the
      // stream before the loop sees it.
      if (!guard->Admit(size, world.clock.NowMs()).ok() ||
          !guard->Check(message).ok()) {
        controller.OnAgentGone(link, "refused by the guard");
        link->Close();
        return;
      }
      controller.OnAgentMessage(link, message);
      break;
    }
    case kAgentGone: {
      auto it = world.links.find(who % 4);
      if (it != world.links.end()) {
        controller.OnAgentGone(it->second);
        it->second->Close();
      }
      break;
    }
    case kTick:
      world.clock.AdvanceMs(1 + who * 100);
      break;
    case kKindCount:
      break;
  }
  world.io.poll();
  world.io.restart();
}

}  // namespace
}  // namespace gantry

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  // Millions of inputs: only what would abort is worth printing.
  static const bool quiet = [] {
    gantry::log::Configure("wire_fuzz", gantry::log::Level::kError);
    return true;
  }();
  (void)quiet;
  gantry::World world;
  size_t at = 0;
  while (at + 4 <= size) {
    const uint8_t kind = data[at];
    const uint8_t who = data[at + 1];
    size_t length = data[at + 2] | (static_cast<size_t>(data[at + 3]) << 8);
    at += 4;
    length = std::min(length, size - at);
    gantry::Apply(world, kind, who, data + at, length);
    at += length;
  }
  world.controller.Stop();
  world.io.poll();
  return 0;
}
