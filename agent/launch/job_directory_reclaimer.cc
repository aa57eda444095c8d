#include "agent/launch/job_directory_reclaimer.h"

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/launch/job_directory.h"

namespace gantry::agent {

JobDirectoryReclaimer::JobDirectoryReclaimer() : thread_([this] { Loop(); }) {}

JobDirectoryReclaimer::~JobDirectoryReclaimer() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  changed_.NotifyAll();
  thread_.join();
}

void JobDirectoryReclaimer::Discard(const std::string& job_dir) {
  const size_t slash = job_dir.rfind('/');
  std::string aside;
  {
    MutexLock lock(mutex_);
    aside = absl::StrCat(job_dir.substr(0, slash + 1), ".gone.",
                         job_dir.substr(slash + 1), ".", discarded_);
    if (std::rename(job_dir.c_str(), aside.c_str()) == 0) {
      ++discarded_;
      queue_.push_back(std::move(aside));
      changed_.NotifyAll();
      return;
    }
  }
  RemoveJobDirectory(job_dir);
}

void JobDirectoryReclaimer::Drain() {
  MutexLock lock(mutex_);
  const uint64_t target = discarded_;
  changed_.Wait(lock, [&] {
    mutex_.AssertHeld();
    return removed_ >= target;
  });
}

void JobDirectoryReclaimer::Loop() {
  MutexLock lock(mutex_);
  while (true) {
    changed_.Wait(lock, [this] {
      mutex_.AssertHeld();
      return stopping_ || !queue_.empty();
    });
    if (queue_.empty()) return;  // stopping, and nothing left
    const std::string path = std::move(queue_.front());
    queue_.pop_front();
    lock.Unlock();
    RemoveJobDirectory(path);
    lock.Lock();
    ++removed_;
    changed_.NotifyAll();
  }
}

}  // namespace gantry::agent
