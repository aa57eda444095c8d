#include "daemon/controller/features/datasets/dataset_cache_waits.h"

#include <utility>

namespace gantry {

bool DatasetCacheWaits::AllDone(const Wait& wait,
                                const DatasetRequests& requests) {
  for (uint64_t id : wait.ids) {
    const DatasetRequest* request = requests.Find(id);
    // Not kept any more: it was answered long ago.
    if (request != nullptr && !request->done) return false;
  }
  return true;
}

void DatasetCacheWaits::Add(std::vector<uint64_t> ids,
                            std::chrono::milliseconds wait,
                            const DatasetRequests& requests, Answer answer) {
  Wait entry{std::move(ids), nullptr, std::move(answer)};
  if (AllDone(entry, requests)) {
    entry.answer(false);
    return;
  }
  const uint64_t key = next_key_++;
  entry.timer = std::make_unique<boost::asio::steady_timer>(io_);
  entry.timer->expires_after(wait);
  entry.timer->async_wait([this, key](const boost::system::error_code& error) {
    if (!error) Finish(key, /*timed_out=*/true);
  });
  waits_.emplace(key, std::move(entry));
}

void DatasetCacheWaits::Check(const DatasetRequests& requests) {
  std::vector<uint64_t> ready;
  for (const auto& [key, wait] : waits_) {
    if (AllDone(wait, requests)) ready.push_back(key);
  }
  for (uint64_t key : ready) Finish(key, /*timed_out=*/false);
}

void DatasetCacheWaits::Stop() {
  while (!waits_.empty()) Finish(waits_.begin()->first, /*timed_out=*/true);
}

void DatasetCacheWaits::Finish(uint64_t key, bool timed_out) {
  auto it = waits_.find(key);
  if (it == waits_.end()) return;
  Wait wait = std::move(it->second);
  waits_.erase(it);
  // Its handler then runs with operation_aborted and does nothing; the
  // timer object itself goes with `wait` (asio keeps the handler alive).
  if (wait.timer) wait.timer->cancel();
  wait.answer(timed_out);
}

}  // namespace gantry
