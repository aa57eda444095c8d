#include "agent/datasets/dataset_stager.h"

#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/datasets/dataset_version_by.h"
#include "agent/launch/rank_launcher.h"
#include "common/dataset_spec.h"
#include "common/log.h"

namespace gantry::agent {
namespace {

// How often a stage in progress reports to the controller.
constexpr auto kProgressEvery = std::chrono::seconds(2);

}  // namespace

DatasetUser DatasetUserOf(const RankIdentity& identity) {
  DatasetUser user;
  user.uid = identity.uid;
  user.gid = identity.gid;
  user.groups = identity.groups;
  user.name = identity.user;
  user.switch_user = identity.switch_user;
  return user;
}

void LogStaged(std::string_view message, uint64_t job,
               const std::string& dataset, const StagedDataset& staged,
               std::chrono::steady_clock::time_point started) {
  log::Info(message,
            {{"job", job},
             {"dataset", dataset},
             {"hit", staged.hit ? "yes" : "no"},
             {"bytes", staged.bytes_total},
             {"copied", staged.bytes_copied},
             {"resumed", staged.bytes_resumed},
             {"reused", staged.bytes_reused},
             {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count()}});
}

DatasetStager::DatasetStager(DatasetCache* cache, std::string cache_problem,
                             std::string node_name, Ready ready, Failed failed,
                             Progress progress, Prepare prepare)
    : cache_(cache),
      cache_problem_(std::move(cache_problem)),
      node_name_(std::move(node_name)),
      ready_(std::move(ready)),
      failed_(std::move(failed)),
      progress_(std::move(progress)),
      prepare_(std::move(prepare)),
      starter_(&DatasetStager::StartReadyLaunches, this) {}

DatasetStager::~DatasetStager() { Stop(); }

void DatasetStager::Stop() {
  {
    MutexLock lock(mutex_);
    idle_.Wait(lock, [this] {
      mutex_.AssertHeld();
      return running_ == 0;
    });
    if (stopping_) return;
    stopping_ = true;
  }
  idle_.NotifyAll();
  starter_.join();
}

void DatasetStager::StartReadyLaunches() {
  MutexLock lock(mutex_);
  while (true) {
    idle_.Wait(lock, [this] {
      mutex_.AssertHeld();
      return stopping_ || !ready_launches_.empty();
    });
    if (ready_launches_.empty()) return;
    v1::LaunchRanks launch = std::move(ready_launches_.front());
    ready_launches_.pop_front();
    lock.Unlock();
    ready_(launch);
    lock.Lock();
  }
}

void DatasetStager::Stage(v1::LaunchRanks launch) {
  const std::pair<uint64_t, uint32_t> attempt{launch.job_id(),
                                              launch.attempt()};
  bool stopped = false;
  {
    MutexLock lock(mutex_);
    stopped = stopping_;
    if (!stopped) {
      ++running_;
      staging_.insert(attempt);
    }
  }
  if (stopped) {
    // Past Stop: nothing would start the ranks once staged.
    failed_(launch, absl::StrCat("the agent on ", node_name_, " is stopping"),
            /*node_fault=*/true);
    return;
  }
  std::thread([this, attempt, launch = std::move(launch)]() mutable {
    Run(std::move(launch));
    MutexLock lock(mutex_);
    staging_.erase(attempt);
    cancelled_.erase(attempt);
    --running_;
    idle_.NotifyAll();
  }).detach();
}

void DatasetStager::Cancel(uint64_t job, uint32_t attempt) {
  MutexLock lock(mutex_);
  if (staging_.count({job, attempt})) cancelled_.insert({job, attempt});
}

bool DatasetStager::Cancelled(const v1::LaunchRanks& launch) {
  MutexLock lock(mutex_);
  return cancelled_.count({launch.job_id(), launch.attempt()}) > 0;
}

void DatasetStager::Release(uint64_t job) {
  if (cache_ != nullptr) cache_->Release(job);
}

void DatasetStager::Run(v1::LaunchRanks launch) {
  if (launch.datasets_size() > 0 && !StageDatasets(launch)) return;
  if (prepare_ && !prepare_(launch)) {
    if (cache_ != nullptr) cache_->Release(launch.job_id());
    return;
  }
  if (Cancelled(launch)) {
    if (cache_ != nullptr) cache_->Release(launch.job_id());
    failed_(launch, "stopped before its ranks started (while staging)", false);
    return;
  }
  MutexLock lock(mutex_);
  ready_launches_.push_back(std::move(launch));
  idle_.NotifyAll();
}

bool DatasetStager::StageDatasets(v1::LaunchRanks& launch) {
  if (cache_ == nullptr) {
    failed_(launch,
            absl::StrCat("node ", node_name_,
                         " has no usable dataset cache: ", cache_problem_),
            /*node_fault=*/true);
    return false;
  }
  absl::StatusOr<RankIdentity> identity =
      ResolveLaunchIdentity(launch, node_name_);
  if (!identity.ok()) {
    failed_(launch, std::string(identity.status().message()), false);
    return false;
  }
  const DatasetUser user = DatasetUserOf(*identity);
  auto& environment = *launch.mutable_job_environment();
  for (const v1::DatasetRef& dataset : launch.datasets()) {
    log::Info("staging dataset", {{"job", launch.job_id()},
                                  {"dataset", dataset.name()},
                                  {"path", dataset.path()}});
    v1::DatasetProgress report;
    report.set_job_id(launch.job_id());
    report.set_attempt(launch.attempt());
    report.set_dataset(dataset.name());
    const auto started = std::chrono::steady_clock::now();
    auto last_sent = started;
    absl::StatusOr<StagedDataset> staged = cache_->Stage(
        launch.job_id(), user, dataset.name(), dataset.path(),
        [&](uint64_t done, uint64_t total) {
          const auto now = std::chrono::steady_clock::now();
          if (now - last_sent < kProgressEvery) return;
          last_sent = now;
          report.set_bytes_done(done);
          report.set_bytes_total(total);
          progress_(report);
        },
        VersionByOf(dataset));
    if (!staged.ok()) {
      cache_->Release(launch.job_id());
      failed_(launch,
              absl::StrCat("dataset ", dataset.name(), " on node ", node_name_,
                           ": ", staged.status().message()),
              DatasetCache::IsNodeFault(staged.status()));
      return false;
    }
    LogStaged("dataset staged", launch.job_id(), dataset.name(), *staged,
              started);
    report.set_bytes_done(staged->bytes_total);
    report.set_bytes_total(staged->bytes_total);
    report.set_done(true);
    report.set_hit(staged->hit);
    report.set_bytes_copied(staged->bytes_copied);
    progress_(report);
    environment[DatasetVariableName(dataset.name())] = staged->local_path;
  }
  return true;
}

}  // namespace gantry::agent
