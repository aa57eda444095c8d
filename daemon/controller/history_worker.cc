#include "daemon/controller/history_worker.h"

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
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
  return true;
}

void HistoryWorker::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
}

void HistoryWorker::Run() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, nothing left to answer
    Task task = std::move(queue_.front());
    queue_.pop_front();
    const bool cancelled = stopping_;
    lock.unlock();
    task(cancelled);
    lock.lock();
  }
}

}  // namespace gantry
