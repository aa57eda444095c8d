// Commits the controller's batches on a thread of its own, so that the loop
// goes on serving requests and staging the next batch while the disk syncs
// the last one. That is what lets the group commit grow with the load: the
// requests that arrive during one synced write all go out in the next.
//
// At most one batch is in flight; batches are written in the order given,
// so a later batch is durable only when every earlier one is. The store
// must allow reads from other threads while the writer commits (RocksDB
// does).
//
// Threading: Commit, busy() and in_flight() on the loop thread only; `done`
// runs there too (posted to the io_context). The destructor waits for the batch
// in flight to be written (its `done` is then posted but may never run).
#pragma once

#include <functional>
#include <memory>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/mutex.h"
#include "daemon/store/state_store.h"

namespace gantry {

class StoreWriter {
 public:
  // `done` gets the commit's outcome and how long the synced write took.
  using Done = std::function<void(absl::Status status, double seconds)>;

  StoreWriter(boost::asio::io_context& io, StateStore& store);
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Writes `batch` with a synced write; `done` is posted to the loop once
  // it is on stable storage (or failed). Requires !busy().
  void Commit(StateStore::Batch batch, Done done);
  // A commit was handed over and its `done` has not run yet.
  bool busy() const { return in_flight_ != nullptr; }
  // That commit's batch (null when none): the loop may read it while the
  // writer thread writes it, since neither changes it.
  const StateStore::Batch* in_flight() const { return in_flight_.get(); }

 private:
  void Run();

  boost::asio::io_context& io_;
  StateStore& store_;
  std::shared_ptr<const StateStore::Batch> in_flight_;  // loop thread only

  Mutex mutex_;
  CondVar wake_;
  std::shared_ptr<const StateStore::Batch> batch_ ABSL_GUARDED_BY(mutex_);
  Done done_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace gantry
