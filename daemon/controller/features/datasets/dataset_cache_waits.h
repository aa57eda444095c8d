// Calls of `gantry cache prefetch` and `gantry cache evict` waiting for
// their nodes' answers. The loop never blocks on them: a wait is a set of
// request ids (dataset_requests.h) and a callback, answered when the last
// of those requests is done (Check, after each agent answer or lost
// stream) or when its time runs out (a timer on the loop), whichever comes
// first, exactly once.
//
// Not thread-safe: owned by the controller and used on its loop only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "daemon/controller/features/datasets/dataset_requests.h"

namespace gantry {

class DatasetCacheWaits {
 public:
  // `timed_out`: the answer comes because the wait ran out (or the
  // controller stops), with some requests still open.
  using Answer = std::function<void(bool timed_out)>;

  explicit DatasetCacheWaits(boost::asio::io_context& io) : io_(io) {}
  DatasetCacheWaits(const DatasetCacheWaits&) = delete;
  DatasetCacheWaits& operator=(const DatasetCacheWaits&) = delete;

  // Answers at once when every one of `ids` is done in `requests` already;
  // otherwise once they are (Check), or after `wait`.
  void Add(std::vector<uint64_t> ids, std::chrono::milliseconds wait,
           const DatasetRequests& requests, Answer answer);
  // Answers the waits whose requests are all done now.
  void Check(const DatasetRequests& requests);
  // Answers every wait as timed out and cancels the timers (the controller
  // stops; the calls must still be finished).
  void Stop();

  size_t size() const { return waits_.size(); }

 private:
  struct Wait {
    std::vector<uint64_t> ids;
    std::unique_ptr<boost::asio::steady_timer> timer;
    Answer answer;
  };
  static bool AllDone(const Wait& wait, const DatasetRequests& requests);
  // Removes the wait before calling its answer, which may add another.
  void Finish(uint64_t key, bool timed_out);

  boost::asio::io_context& io_;
  uint64_t next_key_ = 1;
  std::map<uint64_t, Wait> waits_;
};

}  // namespace gantry
