#include "daemon/controller/features/datasets/stage_ahead.h"

#include <algorithm>
#include <limits>

namespace gantry {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
// With more to send than one Plan may, the next one comes this soon even
// if no answer arrives first.
constexpr int64_t kMoreToSendMs = 1000;

}  // namespace

StageAheadPlanner::StageAheadPlanner(StageAheadOptions options)
    : options_(options) {}

void StageAheadPlanner::SetTargets(std::vector<StageAheadTarget> targets) {
  if (!enabled()) {
    targets_.clear();
    return;
  }
  targets_ = std::move(targets);
  std::stable_sort(targets_.begin(), targets_.end(),
                   [](const StageAheadTarget& a, const StageAheadTarget& b) {
                     return a.start_ms < b.start_ms;
                   });
}

void StageAheadPlanner::Update(Entry& entry, const DatasetRequests& requests,
                               int64_t now_ms) {
  if (entry.answered) return;
  const DatasetRequest* request = requests.Find(entry.request_id);
  if (request != nullptr && !request->done) return;
  // A request no longer kept was answered long ago, how is unknown: it
  // counts as failed, so it is sent again after a back-off (a cheap hit if
  // the copy is there).
  entry.answered = true;
  entry.answered_ms = request != nullptr ? request->done_ms : now_ms;
  entry.ok = request != nullptr && request->result.ok();
  entry.failures = entry.ok ? 0 : entry.failures + 1;
}

int64_t StageAheadPlanner::ResendAt(const Entry& entry,
                                    int64_t start_ms) const {
  if (!entry.ok) {
    int64_t backoff = options_.min_retry_ms;
    for (int i = 1; i < entry.failures && backoff < options_.max_retry_ms;
         ++i) {
      backoff *= 2;
    }
    return entry.answered_ms + std::min(backoff, options_.max_retry_ms);
  }
  // The copy is there; its pin must last until the job starts. Renewed
  // (a hit on the agent) when the reservation moved so far out that it
  // would lapse first.
  return entry.pinned_until_ms >= start_ms + options_.hold_margin_ms / 2
             ? kNever
             : 0;
}

int64_t StageAheadPlanner::HoldMs(int64_t start_ms, int64_t now_ms) const {
  return std::clamp<int64_t>(start_ms - now_ms, 0, options_.window_ms) +
         options_.hold_margin_ms;
}

std::vector<StageAheadSend> StageAheadPlanner::Plan(
    const DatasetRequests& requests, int64_t now_ms) {
  std::vector<StageAheadSend> sends;
  next_plan_ms_ = 0;
  auto wake_at = [this, now_ms](int64_t at) {
    if (at <= now_ms || at == kNever) return;
    if (next_plan_ms_ == 0 || at < next_plan_ms_) next_plan_ms_ = at;
  };
  // Unanswered prefetches per node, whoever sent them; counted once there
  // is something in the window.
  std::map<std::string, int> in_flight;
  bool counted = false;
  for (const StageAheadTarget& target : targets_) {
    if (target.datasets.empty() || target.nodes.empty()) continue;
    if (target.start_ms - now_ms > options_.window_ms) {
      wake_at(target.start_ms - options_.window_ms);
      continue;
    }
    if (!counted) {
      for (const DatasetRequest* request : requests.All()) {
        if (request->kind == DatasetRequest::Kind::kPrefetch &&
            !request->done) {
          ++in_flight[request->node];
        }
      }
      counted = true;
    }
    std::map<Key, Entry>& entries = sent_[target.job_id];
    for (const std::string& node : target.nodes) {
      for (const std::string& dataset : target.datasets) {
        auto it = entries.find(Key(node, dataset));
        if (it != entries.end()) {
          Update(it->second, requests, now_ms);
          if (!it->second.answered) continue;  // on its way
          const int64_t at = ResendAt(it->second, target.start_ms);
          if (at > now_ms) {
            wake_at(at);
            continue;
          }
        }
        // A node at its limit asks for more when an answer comes.
        int& busy = in_flight[node];
        if (busy >= options_.max_in_flight_per_node) continue;
        if (static_cast<int>(sends.size()) >= options_.max_sends_per_pass) {
          wake_at(now_ms + kMoreToSendMs);
          return sends;
        }
        ++busy;
        sends.push_back(
            {target.job_id, node, dataset, HoldMs(target.start_ms, now_ms)});
      }
    }
  }
  return sends;
}

void StageAheadPlanner::Sent(const StageAheadSend& send, uint64_t request_id,
                             int64_t now_ms) {
  Entry& entry = sent_[send.job_id][Key(send.node, send.dataset)];
  entry.request_id = request_id;
  entry.sent_ms = now_ms;
  entry.pinned_until_ms = now_ms + send.hold_ms;
  entry.answered = false;
  entry.ok = false;
  entry.answered_ms = 0;
}

void StageAheadPlanner::Forget(uint64_t job_id) {
  sent_.erase(job_id);
  std::erase_if(targets_, [job_id](const StageAheadTarget& target) {
    return target.job_id == job_id;
  });
}

void StageAheadPlanner::NodeRestarted(const std::string& node) {
  for (auto& [job, entries] : sent_) {
    std::erase_if(entries, [&node](const auto& entry) {
      return entry.first.first == node;
    });
  }
}

}  // namespace gantry
