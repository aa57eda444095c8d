#include "agent/simulated/simulated_node.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/numbers.h"
#include "agent/simulated/simulated_preflight.h"
#include "common/log.h"
#include "common/munge_credential.h"
#include "common/rpc_methods.h"
#include "common/text_file.h"

namespace gantry::agent {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int kFirstBackoffMs = 200;
constexpr int kLastBackoffMs = 2000;
// Attempts not yet whole that GangStartLog remembers.
constexpr size_t kGangStartsKept = 4096;

int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void GangStartLog::RanksStarted(uint64_t job_id, uint32_t attempt,
                                uint32_t count, uint32_t world) {
  MutexLock lock(mutex_);
  uint32_t& started = started_[{job_id, attempt}];
  started += count;
  if (world == 0 || started < world) {
    if (started_.size() > kGangStartsKept) started_.erase(started_.begin());
    return;
  }
  started_.erase({job_id, attempt});
  log::Info("every rank of a simulated job started",
            {{"job", job_id},
             {"attempt", attempt},
             {"ranks", world},
             {"unix_ms", UnixNowMs()}});
}

void GangStartLog::RankEnded(uint64_t job_id, uint32_t attempt) {
  MutexLock lock(mutex_);
  started_.erase({job_id, attempt});
}

SimulatedNode::SimulatedNode(SimulatedNodeHost& host,
                             const SimulatedNodeShared& shared,
                             std::string name, uint32_t index,
                             v1::AgentService::Stub* stub)
    : host_(host),
      shared_(shared),
      identity_{.node_name = std::move(name),
                .address = shared.address,
                .boot_id = shared.boot_id,
                // The fleet's ranks die with its process: one instance.
                .instance = shared.boot_id,
                .simulated = true,
                .features = shared.features},
      index_(index),
      stub_(stub),
      start_tag_{this, CompletionTag::Op::kStart},
      read_tag_{this, CompletionTag::Op::kRead},
      write_tag_{this, CompletionTag::Op::kWrite},
      finish_tag_{this, CompletionTag::Op::kFinish},
      ranks_(shared.rank_defaults),
      random_(index + 1) {}

SimulatedNode::~SimulatedNode() {
  // The call must go before the context it runs in.
  stream_.reset();
  context_.reset();
}

void SimulatedNode::Start() {
  if (stopping_ || state_ != State::kIdle || waiting_for_dial_) return;
  waiting_for_dial_ = true;
  host_.RequestDial(this);
}

void SimulatedNode::Dial() {
  waiting_for_dial_ = false;
  holds_dial_slot_ = true;
  if (stopping_ || state_ != State::kIdle) {
    holds_dial_slot_ = false;
    host_.ReleaseDialSlot();
    return;
  }
  context_ = std::make_unique<grpc::ClientContext>();
  // A controller that is away (restarting) is redialled as soon as it
  // listens, as the real agent does.
  context_->set_wait_for_ready(true);
  if (shared_.use_munge) {
    // A fresh credential per stream: munged refuses one used twice.
    absl::StatusOr<std::string> credential = EncodeMungeCredential(
        shared_.munge_socket, MungePayloadFor(kAgentConnectMethod));
    if (credential.ok()) {
      context_->AddMetadata(kMungeMetadataKey, *credential);
    } else {
      host_.CredentialFailed(credential.status());
    }
  }
  stream_ = stub_->PrepareAsyncConnect(context_.get(), host_.queue());
  state_ = State::kStarting;
  finish_called_ = false;
  ++in_flight_;
  stream_->StartCall(&start_tag_);
}

void SimulatedNode::Stop() {
  stopping_ = true;
  if (state_ != State::kIdle) Break();
}

void SimulatedNode::OnCompletion(CompletionTag::Op op, bool ok) {
  --in_flight_;
  switch (op) {
    case CompletionTag::Op::kStart:
      OnStarted(ok);
      break;
    case CompletionTag::Op::kRead:
      OnRead(ok);
      break;
    case CompletionTag::Op::kWrite:
      OnWritten(ok);
      break;
    case CompletionTag::Op::kFinish:
      OnFinished();
      return;
    case CompletionTag::Op::kTick:
      break;
  }
  FinishWhenIdle();
}

void SimulatedNode::OnStarted(bool ok) {
  if (!ok || state_ != State::kStarting) {
    Break();
    return;
  }
  state_ = State::kRegistering;
  v1::AgentMessage hello;
  *hello.mutable_register_() =
      BuildRegister(identity_, shared_.inventory, exits_, ranks_.Running());
  Send(std::move(hello));
  StartRead();
}

void SimulatedNode::StartRead() {
  reading_ = true;
  ++in_flight_;
  stream_->Read(&incoming_, &read_tag_);
}

void SimulatedNode::OnRead(bool ok) {
  reading_ = false;
  if (!ok) {
    Break();
    return;
  }
  if (state_ == State::kClosing) return;
  OnMessage(incoming_);
  if (state_ != State::kClosing) StartRead();
}

void SimulatedNode::Send(v1::AgentMessage message) {
  if (state_ != State::kRegistering && state_ != State::kConnected) return;
  if (message.has_heartbeat()) heartbeat_queued_ = true;
  outgoing_.push_back(std::move(message));
  if (!writing_) WriteNext();
}

void SimulatedNode::WriteNext() {
  writing_ = true;
  ++in_flight_;
  stream_->Write(outgoing_.front(), &write_tag_);
}

void SimulatedNode::OnWritten(bool ok) {
  writing_ = false;
  if (!ok) {
    Break();
    return;
  }
  if (state_ == State::kClosing) return;
  if (outgoing_.front().has_heartbeat()) heartbeat_queued_ = false;
  outgoing_.pop_front();
  if (state_ == State::kRegistering) {
    // The Register is out: the node is connected, as the real agent is
    // once its first write succeeds.
    state_ = State::kConnected;
    backoff_ms_ = kFirstBackoffMs;
    holds_dial_slot_ = false;
    host_.ReleaseDialSlot();
    host_.NodeConnected(true);
    // Spread the fleet's heartbeats over the interval rather than sending
    // them all in the same tick.
    next_heartbeat_ms_ = host_.NowMs() + 1 + random_() % heartbeat_interval_ms_;
    ScheduleWake();
    log::Debug("simulated node connected", {{"node", name()}});
  }
  if (!outgoing_.empty()) WriteNext();
}

void SimulatedNode::Break() {
  if (state_ == State::kClosing || state_ == State::kIdle) return;
  if (state_ == State::kConnected) host_.NodeConnected(false);
  state_ = State::kClosing;
  if (context_) context_->TryCancel();
  if (holds_dial_slot_) {
    holds_dial_slot_ = false;
    host_.ReleaseDialSlot();
  }
  FinishWhenIdle();
}

void SimulatedNode::FinishWhenIdle() {
  // Finish only once nothing else is outstanding on the call, so that its
  // completion is the last one and the call can go when it comes.
  if (state_ != State::kClosing || in_flight_ > 0 || finish_called_) return;
  finish_called_ = true;
  ++in_flight_;
  stream_->Finish(&final_status_, &finish_tag_);
}

void SimulatedNode::OnFinished() {
  host_.StreamEnded(*this, final_status_);
  stream_.reset();
  context_.reset();
  outgoing_.clear();
  heartbeat_queued_ = false;
  state_ = State::kIdle;
  if (stopping_) return;
  // Jittered so that a fleet whose controller restarted does not redial
  // all at once.
  const int wait_ms =
      backoff_ms_ / 2 + static_cast<int>(random_() % (backoff_ms_ + 1));
  redial_at_ms_ = host_.NowMs() + wait_ms;
  backoff_ms_ = std::min(backoff_ms_ * 2, kLastBackoffMs);
  ScheduleWake();
}

void SimulatedNode::OnMessage(const v1::ControllerMessage& message) {
  const int64_t now = host_.NowMs();
  switch (message.body_case()) {
    case v1::ControllerMessage::kRegistered:
      heartbeat_interval_ms_ = HeartbeatIntervalMs(message.registered());
      next_heartbeat_ms_ =
          std::min<int64_t>(next_heartbeat_ms_, now + heartbeat_interval_ms_);
      break;
    case v1::ControllerMessage::kLaunch: {
      const v1::LaunchRanks& launch = message.launch();
      log::Debug("launching simulated ranks", {{"node", name()},
                                               {"job", launch.job_id()},
                                               {"attempt", launch.attempt()},
                                               {"ranks", launch.ranks_size()}});
      SimulatedRanks::LaunchResult result = ranks_.Launch(launch, now);
      for (const v1::RankId& rank : result.started) {
        Send(RankStartedMessage(rank, 0));
      }
      if (!result.started.empty() && shared_.gang_starts) {
        uint32_t world = 0;
        const auto& environment = launch.ranks(0).environment();
        auto ntasks = environment.find("GANTRY_NTASKS");
        if (ntasks != environment.end()) {
          (void)absl::SimpleAtoi(ntasks->second, &world);
        }
        shared_.gang_starts->RanksStarted(
            launch.job_id(), launch.attempt(),
            static_cast<uint32_t>(result.started.size()), world);
      }
      RecordEnds(std::move(result.failed));
      break;
    }
    case v1::ControllerMessage::kKill: {
      const v1::KillRanks& kill = message.kill();
      log::Debug("stopping simulated ranks", {{"node", name()},
                                              {"job", kill.job_id()},
                                              {"attempt", kill.attempt()},
                                              {"signal", kill.signal()}});
      RecordEnds(ranks_.Kill(kill.job_id(), kill.attempt(), kill.signal(),
                             kill.grace_seconds(),
                             /*escalate=*/!kill.signal_only(), now));
      break;
    }
    case v1::ControllerMessage::kAck:
      exits_.Acknowledge(message.ack().up_to_sequence());
      break;
    case v1::ControllerMessage::kProbe:
      next_heartbeat_ms_ = now;
      break;
    case v1::ControllerMessage::kPreflight:
      StartPreflight(message.preflight(), now);
      break;
    case v1::ControllerMessage::kDatasetPrefetch:
    case v1::ControllerMessage::kDatasetEvict: {
      // A simulated node has no disk and reports no cache: every request
      // is refused, at once, so that none stays open in gantryd. (A
      // pretended copy would show data where there is none.)
      v1::AgentMessage answer;
      v1::DatasetCacheResult& result = *answer.mutable_dataset_cache_result();
      result.set_request_id(message.has_dataset_prefetch()
                                ? message.dataset_prefetch().request_id()
                                : message.dataset_evict().request_id());
      result.set_ok(false);
      result.set_message("node " + name() +
                         " is simulated and has no dataset cache");
      Send(answer);
      break;
    }
    default:
      break;
  }
  ScheduleWake();
}

void SimulatedNode::StartPreflight(const v1::PreflightCheck& check,
                                   int64_t now_ms) {
  SimulatedPreflightPlan plan;
  if (!shared_.preflight_plan_path.empty()) {
    absl::StatusOr<std::string> text =
        ReadWholeFile(shared_.preflight_plan_path);
    absl::StatusOr<SimulatedPreflightPlan> parsed =
        text.ok() ? ParseSimulatedPreflightPlan(*text)
                  : absl::StatusOr<SimulatedPreflightPlan>(text.status());
    if (parsed.ok()) {
      plan = std::move(*parsed);
    } else {
      // A plan that cannot be read fails this node's check: a test that
      // meant something else must not pass by accident.
      log::Warn("simulated pre-flight plan unusable",
                {{"node", name()}, {"error", parsed.status().ToString()}});
      plan[name()] = {.kind = SimulatedPreflightBehavior::Kind::kFail,
                      .why = std::string(parsed.status().message())};
    }
  }
  std::optional<v1::PreflightResult> result =
      SimulatePreflight(check, name(), plan, shared_.preflight_ms);
  if (!result) return;
  v1::AgentMessage message;
  *message.mutable_preflight_result() = std::move(*result);
  preflight_answers_.emplace_back(now_ms + shared_.preflight_ms,
                                  std::move(message));
}

void SimulatedNode::RecordEnds(std::vector<SimulatedRankEnd> ends) {
  for (const SimulatedRankEnd& end : ends) {
    if (shared_.gang_starts) {
      shared_.gang_starts->RankEnded(end.rank.job_id(), end.rank.attempt());
    }
    Send(
        RankEventMessage(exits_.Record(RankEndedEvent(end.rank, end.outcome))));
  }
}

void SimulatedNode::SendHeartbeat(int64_t now_ms) {
  // One heartbeat waiting in the queue is enough: a slow stream gets no
  // pile of stale ones.
  if (!heartbeat_queued_) {
    Send(HeartbeatMessage(0.0, static_cast<uint32_t>(ranks_.size()), {}, {}));
  }
  next_heartbeat_ms_ += heartbeat_interval_ms_;
  // After a stall, beat on from now rather than catching up.
  if (next_heartbeat_ms_ <= now_ms) {
    next_heartbeat_ms_ = now_ms + heartbeat_interval_ms_;
  }
}

void SimulatedNode::OnWake(int64_t at_ms) {
  if (at_ms != wake_pending_ms_) return;  // superseded by an earlier wake
  wake_pending_ms_ = kNever;
  const int64_t now = host_.NowMs();
  RecordEnds(ranks_.TakeDue(now));
  while (!preflight_answers_.empty() &&
         preflight_answers_.front().first <= now) {
    Send(std::move(preflight_answers_.front().second));
    preflight_answers_.pop_front();
  }
  if (state_ == State::kConnected && now >= next_heartbeat_ms_) {
    SendHeartbeat(now);
  }
  if (state_ == State::kIdle && !stopping_ && !waiting_for_dial_ &&
      now >= redial_at_ms_) {
    Start();
  }
  ScheduleWake();
}

void SimulatedNode::ScheduleWake() {
  int64_t next = ranks_.NextDueMs();
  if (!preflight_answers_.empty()) {
    next = std::min(next, preflight_answers_.front().first);
  }
  if (state_ == State::kConnected) next = std::min(next, next_heartbeat_ms_);
  if (state_ == State::kIdle && !stopping_ && !waiting_for_dial_) {
    next = std::min(next, redial_at_ms_);
  }
  if (next >= wake_pending_ms_) return;
  wake_pending_ms_ = next;
  host_.PushWake(this, next);
}

}  // namespace gantry::agent
