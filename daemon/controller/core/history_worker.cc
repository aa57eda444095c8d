#include "daemon/controller/core/history_worker.h"

#include <utility>

namespace gantry {

HistoryWorker::HistoryWorker(size_t max_queued)
    : max_queued_(max_queued), thread_([this] { Run(); }) {}

HistoryWorker::~HistoryWorker() {
  Stop();
  thread_.join();
}

bool HistoryWorker::Post(Task task) {
  {
    MutexLock lock(mutex_);
    if (stopping_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(task));
  }
  wake_.NotifyOne();
  return true;
}

void HistoryWorker::Stop() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.NotifyOne();
}

void HistoryWorker::Run() {
  MutexLock lock(mutex_);
  while (true) {
    wake_.Wait(lock, [this] {
      mutex_.AssertHeld();
      return !queue_.empty() || stopping_;
    });
    if (queue_.empty()) return;  // stopping, nothing left to answer
    Task task = std::move(queue_.front());
    queue_.pop_front();
    const bool cancelled = stopping_;
    lock.Unlock();
    task(cancelled);
    lock.Lock();
  }
}

}  // namespace gantry
