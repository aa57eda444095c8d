#include "daemon/store/store_writer.h"

#include <chrono>
#include <utility>

#include <boost/asio/post.hpp>

namespace gantry {

StoreWriter::StoreWriter(boost::asio::io_context& io, StateStore& store)
    : io_(io), store_(store), thread_([this] { Run(); }) {}

StoreWriter::~StoreWriter() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.NotifyOne();
  thread_.join();
}

void StoreWriter::Commit(StateStore::Batch batch, Done done) {
  in_flight_ = std::make_shared<const StateStore::Batch>(std::move(batch));
  {
    MutexLock lock(mutex_);
    batch_ = in_flight_;
    done_ = [this, done = std::move(done)](absl::Status status,
                                           double seconds) {
      in_flight_.reset();
      done(std::move(status), seconds);
    };
  }
  wake_.NotifyOne();
}

void StoreWriter::Run() {
  MutexLock lock(mutex_);
  while (true) {
    // Written out even when stopping: the loop may already count on it.
    wake_.Wait(lock, [this] {
      mutex_.AssertHeld();
      return batch_ != nullptr || stopping_;
    });
    if (!batch_) return;
    std::shared_ptr<const StateStore::Batch> batch = std::move(batch_);
    Done done = std::move(done_);
    lock.Unlock();
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = store_.Commit(*batch, /*sync=*/true);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    boost::asio::post(
        io_, [done = std::move(done), status = std::move(status),
              seconds]() mutable { done(std::move(status), seconds); });
    lock.Lock();
  }
}

}  // namespace gantry
