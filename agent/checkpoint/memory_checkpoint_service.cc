#include "agent/checkpoint/memory_checkpoint_service.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "agent/system/scoped_fd.h"
#include "common/log.h"

namespace gantry::agent {
namespace {

using Clock = std::chrono::steady_clock;

bool SameHeld(const std::vector<v1::HeldMemoryCheckpoint>& a,
              const std::vector<v1::HeldMemoryCheckpoint>& b) {
  return std::equal(
      a.begin(), a.end(), b.begin(), b.end(),
      [](const v1::HeldMemoryCheckpoint& x, const v1::HeldMemoryCheckpoint& y) {
        return x.job_id() == y.job_id() && x.rank() == y.rank() &&
               x.step() == y.step() && x.replica() == y.replica() &&
               x.bytes() == y.bytes();
      });
}

// Reads the server's one-line answer.
absl::StatusOr<GoAnswer> ReadAnswer(int fd, TransferDeadline deadline) {
  std::string line;
  if (!ReceiveLineBy(fd, line, kMaxMemoryCheckpointLine, deadline)) {
    return absl::UnavailableError("no answer (the peer closed or timed out)");
  }
  return ParseGoAnswer(line);
}

// Sends `request` on `socket` and reads the answer (an error unless "GO").
absl::StatusOr<GoAnswer> Ask(int socket, const MemoryCheckpointRequest& request,
                             TransferDeadline deadline) {
  if (!SendLineBy(socket, FormatMemoryCheckpointRequest(request), deadline)) {
    return absl::UnavailableError("sending the request failed");
  }
  return ReadAnswer(socket, deadline);
}

}  // namespace

MemoryCheckpointService::MemoryCheckpointService(
    std::unique_ptr<MemoryCheckpointStore> store,
    MemoryCheckpointServiceOptions options, Changed changed)
    : store_(std::move(store)),
      options_(std::move(options)),
      changed_(std::move(changed)) {
  replicator_ = std::thread([this] { ReplicateLoop(); });
}

void MemoryCheckpointService::Abort() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
    // Ends every transfer in progress at once, served or sent: a peer that
    // froze must not hold the agent's stop for the transfer timeout.
    for (int fd : serving_) ::shutdown(fd, SHUT_RDWR);
  }
  replicate_wake_.NotifyAll();
}

MemoryCheckpointService::OutgoingTransfer::OutgoingTransfer(
    MemoryCheckpointService& service, int fd)
    : service_(service), fd_(fd) {
  MutexLock lock(service_.mutex_);
  admitted_ = !service_.stopping_;
  if (admitted_) service_.serving_.insert(fd_);
}

MemoryCheckpointService::OutgoingTransfer::~OutgoingTransfer() {
  MutexLock lock(service_.mutex_);
  if (admitted_) service_.serving_.erase(fd_);
}

MemoryCheckpointService::~MemoryCheckpointService() {
  std::map<int, std::thread> connections;
  std::vector<std::thread> finished;
  Abort();
  replicator_.join();
  {
    MutexLock lock(mutex_);
    connections.swap(connections_);
    finished.swap(finished_);
  }
  for (auto& [fd, thread] : connections) thread.join();
  for (std::thread& thread : finished) thread.join();
}

absl::StatusOr<std::string> MemoryCheckpointService::PrepareRankDirectory(
    uint64_t job, uint32_t rank, uid_t uid, gid_t gid) {
  return store_->PrepareRankDirectory(job, rank, uid, gid);
}

void MemoryCheckpointService::Plan(const v1::MemoryCheckpointPlan& plan) {
  {
    MutexLock lock(mutex_);
    auto [it, added] = plans_.try_emplace(plan.job_id(), plan);
    if (!added) {
      // A new peer has none of the job's snapshots yet.
      if (it->second.replicate_to().node() != plan.replicate_to().node()) {
        std::erase_if(pushed_, [&](const auto& entry) {
          return entry.first.first == plan.job_id();
        });
      }
      it->second = plan;
    }
    rescan_due_ = true;
  }
  WakeReplicator();
}

void MemoryCheckpointService::Drop(uint64_t job) {
  {
    MutexLock lock(mutex_);
    plans_.erase(job);
    std::erase_if(pushed_,
                  [&](const auto& entry) { return entry.first.first == job; });
    std::erase_if(push_problems_,
                  [&](const auto& entry) { return entry.first.first == job; });
    std::erase_if(restored_,
                  [&](const auto& entry) { return entry.first == job; });
  }
  if (absl::Status dropped = store_->Drop(job); !dropped.ok()) {
    log::Warn("cannot remove a job's memory checkpoints",
              {{"job", job}, {"error", dropped.ToString()}});
  }
  {
    MutexLock lock(mutex_);
    rescan_due_ = true;
  }
  WakeReplicator();
}

bool MemoryCheckpointService::TokenMatches(uint64_t job,
                                           const std::string& token) {
  auto it = plans_.find(job);
  return it != plans_.end() && it->second.token() == token;
}

bool MemoryCheckpointService::Take(int fd, const std::string& line) {
  absl::StatusOr<MemoryCheckpointRequest> request =
      ParseMemoryCheckpointRequest(line);
  if (!request.ok()) return false;
  MutexLock lock(mutex_);
  if (stopping_ || !TokenMatches(request->job, request->token) ||
      connections_.size() >= kMaxConnections) {
    return false;
  }
  serving_.insert(fd);
  connections_.emplace(
      fd, std::thread([this, fd, request = std::move(*request)]() mutable {
        Serve(fd, std::move(request));
      }));
  return true;
}

void MemoryCheckpointService::Serve(int fd, MemoryCheckpointRequest request) {
  const TransferDeadline deadline = Clock::now() + options_.transfer_timeout;
  if (request.kind == MemoryCheckpointRequest::Kind::kPut) {
    ServePut(fd, request, deadline);
  } else {
    ServeGet(fd, request, deadline);
  }
  MutexLock lock(mutex_);
  serving_.erase(fd);
  ::close(fd);
  auto it = connections_.find(fd);
  if (it != connections_.end()) {
    // Joined by the replicator's next round or the destructor.
    finished_.push_back(std::move(it->second));
    connections_.erase(it);
  }
}

void MemoryCheckpointService::ServePut(int fd,
                                       const MemoryCheckpointRequest& request,
                                       TransferDeadline deadline) {
  absl::StatusOr<MemoryCheckpointStore::Incoming> incoming =
      store_->BeginReplica(request.job, request.rank, request.step,
                           request.bytes);
  if (!incoming.ok()) {
    (void)SendLineBy(fd, absl::StrCat("NO ", incoming.status().message()),
                     deadline);
    return;
  }
  if (!SendLineBy(fd, "GO", deadline)) {
    store_->Abandon(std::move(*incoming));
    return;
  }
  absl::Status received = ReceiveSnapshotFiles(
      fd, incoming->dir.get(), request.files, request.bytes, deadline);
  if (received.ok())
    received = store_->Commit(std::move(*incoming));
  else
    store_->Abandon(std::move(*incoming));
  (void)SendLineBy(fd, received.ok() ? "OK" : "NO " + received.ToString(),
                   deadline);
  if (!received.ok()) {
    log::Warn("memory checkpoint replica not taken",
              {{"job", request.job},
               {"rank", request.rank},
               {"step", request.step},
               {"error", received.ToString()}});
    return;
  }
  {
    MutexLock lock(mutex_);
    rescan_due_ = true;
  }
  WakeReplicator();
}

void MemoryCheckpointService::ServeGet(int fd,
                                       const MemoryCheckpointRequest& request,
                                       TransferDeadline deadline) {
  absl::StatusOr<MemoryCheckpointStore::OpenStep> step =
      store_->OpenSnapshot(request.job, request.rank, request.step);
  if (!step.ok()) {
    (void)SendLineBy(fd, absl::StrCat("NO ", step.status().message()),
                     deadline);
    return;
  }
  if (!SendLineBy(fd,
                  absl::StrCat("GO ", step->listing.files.size(), " ",
                               step->listing.bytes),
                  deadline)) {
    return;
  }
  if (absl::Status sent = SendSnapshotFiles(fd, step->dir.get(), step->listing,
                                            step->owner, deadline);
      !sent.ok()) {
    log::Warn("memory checkpoint fetch failed while sending",
              {{"job", request.job},
               {"rank", request.rank},
               {"step", request.step},
               {"error", sent.ToString()}});
  }
}

absl::Status MemoryCheckpointService::Push(uint64_t job, uint32_t rank,
                                           int64_t step,
                                           const v1::MemoryCheckpointPeer& peer,
                                           const std::string& token) {
  absl::StatusOr<MemoryCheckpointStore::OpenStep> open =
      store_->OpenOwnSnapshot(job, rank, step);
  if (!open.ok()) return open.status();
  if (store_->job_limit_bytes() > 0 &&
      open->listing.bytes > store_->job_limit_bytes()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "snapshot of ", open->listing.bytes, " bytes is above the limit of ",
        store_->job_limit_bytes(), " ([agent] memory-checkpoint-limit)"));
  }
  const TransferDeadline deadline = Clock::now() + options_.transfer_timeout;
  absl::StatusOr<int> connected =
      ConnectBy(peer.address(), peer.port(), deadline);
  if (!connected.ok()) return connected.status();
  ScopedFd socket(*connected);
  const OutgoingTransfer transfer(*this, socket.get());
  if (!transfer.admitted())
    return absl::CancelledError("the agent is stopping");
  if (absl::StatusOr<GoAnswer> go =
          Ask(socket.get(),
              {.kind = MemoryCheckpointRequest::Kind::kPut,
               .token = token,
               .job = job,
               .rank = rank,
               .step = step,
               .files = open->listing.files.size(),
               .bytes = open->listing.bytes},
              deadline);
      !go.ok()) {
    return go.status();
  }
  if (absl::Status sent = SendSnapshotFiles(
          socket.get(), open->dir.get(), open->listing, open->owner, deadline);
      !sent.ok()) {
    return sent;
  }
  std::string done;
  if (!ReceiveLineBy(socket.get(), done, kMaxMemoryCheckpointLine, deadline)) {
    return absl::UnavailableError("no answer once the snapshot was sent");
  }
  if (done != "OK") return absl::FailedPreconditionError(done.substr(0, 300));
  return absl::OkStatus();
}

absl::Status MemoryCheckpointService::Fetch(
    uint64_t job, uint32_t rank, int64_t step,
    const v1::MemoryCheckpointPeer& holder, const std::string& token) {
  const TransferDeadline deadline = Clock::now() + options_.transfer_timeout;
  absl::StatusOr<int> connected =
      ConnectBy(holder.address(), holder.port(), deadline);
  if (!connected.ok()) return connected.status();
  ScopedFd socket(*connected);
  const OutgoingTransfer transfer(*this, socket.get());
  if (!transfer.admitted())
    return absl::CancelledError("the agent is stopping");
  absl::StatusOr<GoAnswer> go =
      Ask(socket.get(),
          {.kind = MemoryCheckpointRequest::Kind::kGet,
           .token = token,
           .job = job,
           .rank = rank,
           .step = step},
          deadline);
  if (!go.ok()) return go.status();
  absl::StatusOr<MemoryCheckpointStore::Incoming> incoming =
      store_->BeginRestore(job, rank, step);
  if (!incoming.ok()) return incoming.status();
  absl::Status received = ReceiveSnapshotFiles(
      socket.get(), incoming->dir.get(), go->files, go->bytes, deadline);
  if (!received.ok()) {
    store_->Abandon(std::move(*incoming));
    return received;
  }
  return store_->Commit(std::move(*incoming));
}

absl::Status MemoryCheckpointService::Restore(const v1::LaunchRanks& launch) {
  const v1::MemoryRestore& restore = launch.memory_restore();
  const uint64_t job = launch.job_id();
  const std::pair<uint64_t, uint32_t> attempt{job, launch.attempt()};
  MutexLock one_at_a_time(restore_mutex_);
  {
    MutexLock lock(mutex_);
    if (restored_.contains(attempt)) return absl::OkStatus();
  }
  // The sources name the ranks this node takes over, whatever ranks the
  // launch itself starts (a step's tasks are numbered their own way).
  for (const v1::MemoryRestore::Source& source : restore.sources()) {
    if (store_->HasOwnSnapshot(job, source.rank(), restore.step())) {
      log::Info(
          "memory checkpoint already here",
          {{"job", job}, {"rank", source.rank()}, {"step", restore.step()}});
      continue;
    }
    const auto started = Clock::now();
    if (absl::Status fetched = Fetch(job, source.rank(), restore.step(),
                                     source.holder(), restore.token());
        !fetched.ok()) {
      return absl::Status(
          fetched.code(),
          absl::StrCat("restoring rank ", source.rank(), "'s snapshot of step ",
                       restore.step(), " from node ", source.holder().node(),
                       ": ", fetched.message()));
    }
    log::Info("memory checkpoint restored",
              {{"job", job},
               {"rank", source.rank()},
               {"step", restore.step()},
               {"from", source.holder().node()},
               {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                          Clock::now() - started)
                          .count()}});
  }
  log::Info("memory checkpoints restored for the attempt",
            {{"job", job},
             {"attempt", launch.attempt()},
             {"step", restore.step()},
             {"ranks", restore.sources_size()}});
  {
    MutexLock lock(mutex_);
    restored_.insert(attempt);
    rescan_due_ = true;
  }
  WakeReplicator();
  return absl::OkStatus();
}

std::optional<v1::MemoryCheckpointReport> MemoryCheckpointService::Report(
    bool always) {
  MutexLock lock(mutex_);
  if (!always && generation_ == reported_generation_) return std::nullopt;
  reported_generation_ = generation_;
  v1::MemoryCheckpointReport report;
  for (const v1::HeldMemoryCheckpoint& held : held_) {
    *report.add_held() = held;
  }
  return report;
}

void MemoryCheckpointService::WakeReplicator() { replicate_wake_.NotifyAll(); }

void MemoryCheckpointService::ReplicateLoop() {
  MutexLock lock(mutex_);
  while (!stopping_) {
    std::vector<std::thread> finished;
    finished.swap(finished_);
    lock.Unlock();
    for (std::thread& thread : finished) thread.join();
    ReplicateOnce();
    lock.Lock();
    const auto due = [this] {
      mutex_.AssertHeld();
      return stopping_ || rescan_due_;
    };
    // Ranks' new snapshots are looked for only while a job has a plan here
    // (it runs here, or this node is its peer); an agent without one sleeps
    // until a plan, a push, a restore or a drop wakes it.
    if (plans_.empty()) {
      replicate_wake_.Wait(lock, due);
    } else {
      replicate_wake_.WaitFor(lock, options_.poll_interval, due);
    }
    rescan_due_ = false;
  }
}

void MemoryCheckpointService::ReplicateOnce() {
  std::vector<std::string> refused;
  std::vector<v1::HeldMemoryCheckpoint> held = store_->Held(&refused);
  for (const std::string& problem : refused) {
    MutexLock lock(mutex_);
    // Each once (and a bounded number remembered): the rank's directory is
    // looked at every round.
    if (refusals_logged_.size() > 1024) refusals_logged_.clear();
    if (!refusals_logged_.insert(problem).second) continue;
    log::Warn("memory checkpoint snapshot refused: not replicated or served",
              {{"error", problem}});
  }
  std::map<uint64_t, v1::MemoryCheckpointPlan> plans;
  {
    MutexLock lock(mutex_);
    plans = plans_;
  }
  for (const v1::HeldMemoryCheckpoint& entry : held) {
    if (entry.replica()) continue;
    auto plan = plans.find(entry.job_id());
    if (plan == plans.end() || !plan->second.has_replicate_to()) continue;
    const std::pair<uint64_t, uint32_t> key{entry.job_id(), entry.rank()};
    {
      MutexLock lock(mutex_);
      if (stopping_) return;
      auto done = pushed_.find(key);
      // Held lists the newest step first: older ones are never pushed
      // after a newer one.
      if (done != pushed_.end() && done->second >= entry.step()) continue;
    }
    const auto started = Clock::now();
    absl::Status pushed =
        Push(entry.job_id(), entry.rank(), entry.step(),
             plan->second.replicate_to(), plan->second.token());
    MutexLock lock(mutex_);
    if (!pushed.ok()) {
      // Tried again at the next round (a newer snapshot replaces it), and
      // logged when the reason changes, not every round.
      std::string& last = push_problems_[key];
      if (last == pushed.message()) continue;
      last = std::string(pushed.message());
      log::Warn("memory checkpoint not replicated",
                {{"job", entry.job_id()},
                 {"rank", entry.rank()},
                 {"step", entry.step()},
                 {"peer", plan->second.replicate_to().node()},
                 {"error", pushed.ToString()}});
      continue;
    }
    pushed_[key] = entry.step();
    push_problems_.erase(key);
    log::Debug("memory checkpoint replicated",
               {{"job", entry.job_id()},
                {"rank", entry.rank()},
                {"step", entry.step()},
                {"peer", plan->second.replicate_to().node()},
                {"bytes", entry.bytes()},
                {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                           Clock::now() - started)
                           .count()}});
  }
  bool changed = false;
  {
    MutexLock lock(mutex_);
    if (!SameHeld(held, held_)) {
      held_ = std::move(held);
      ++generation_;
      changed = true;
    }
  }
  if (changed && changed_) changed_();
}

}  // namespace gantry::agent
