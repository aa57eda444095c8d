#include "daemon/store/store_writer.h"

#include <chrono>
#include <utility>

#include <boost/asio/post.hpp>

namespace gantry {

StoreWriter::StoreWriter(boost::asio::io_context& io, StateStore& store)
    : io_(io), store_(store), thread_([this] { Run(); }) {}

StoreWriter::~StoreWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void StoreWriter::Commit(StateStore::Batch batch, Done done) {
  in_flight_ = std::make_shared<const StateStore::Batch>(std::move(batch));
  {
    std::lock_guard lock(mutex_);
    batch_ = in_flight_;
    done_ = [this, done = std::move(done)](absl::Status status,
                                           double seconds) {
      in_flight_.reset();
      done(std::move(status), seconds);
    };
  }
  wake_.notify_one();
}

void StoreWriter::Run() {
  std::unique_lock lock(mutex_);
  while (true) {
    // Written out even when stopping: the loop may already count on it.
    wake_.wait(lock, [this] { return batch_ != nullptr || stopping_; });
    if (!batch_) return;
    std::shared_ptr<const StateStore::Batch> batch = std::move(batch_);
    Done done = std::move(done_);
    lock.unlock();
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = store_.Commit(*batch, /*sync=*/true);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    boost::asio::post(
        io_, [done = std::move(done), status = std::move(status),
              seconds]() mutable { done(std::move(status), seconds); });
    lock.lock();
  }
}

}  // namespace gantry
