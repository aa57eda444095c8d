#include "daemon/controller/features/memory_checkpoints/memory_checkpoint_ledger.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry {

std::set<uint64_t> MemoryCheckpointLedger::Report(
    const std::string& node, const v1::MemoryCheckpointReport& report) {
  std::set<uint64_t> changed = jobs_by_node_[node];
  for (uint64_t job : changed) {
    auto it = held_.find(job);
    if (it == held_.end()) continue;
    for (auto& [rank, steps] : it->second) {
      for (auto& [step, holders] : steps) holders.erase(node);
      std::erase_if(steps,
                    [](const auto& entry) { return entry.second.empty(); });
    }
    std::erase_if(it->second,
                  [](const auto& entry) { return entry.second.empty(); });
    if (it->second.empty()) held_.erase(it);
  }
  std::set<uint64_t>& jobs = jobs_by_node_[node];
  jobs.clear();
  for (const v1::HeldMemoryCheckpoint& entry : report.held()) {
    held_[entry.job_id()][entry.rank()][entry.step()][node] = entry.replica();
    jobs.insert(entry.job_id());
    changed.insert(entry.job_id());
  }
  if (jobs.empty()) jobs_by_node_.erase(node);
  return changed;
}

void MemoryCheckpointLedger::Forget(uint64_t job) {
  held_.erase(job);
  for (auto it = jobs_by_node_.begin(); it != jobs_by_node_.end();) {
    it->second.erase(job);
    it = it->second.empty() ? jobs_by_node_.erase(it) : std::next(it);
  }
}

std::string MemoryCheckpointLedger::Describe(uint64_t job) const {
  auto it = held_.find(job);
  if (it == held_.end()) return "nothing";
  std::string text;
  for (const auto& [rank, steps] : it->second) {
    absl::StrAppend(&text, text.empty() ? "" : "; ", "rank ", rank, ":");
    for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
      absl::StrAppend(&text, step == steps.rbegin() ? "" : ",", " step ",
                      step->first, " on");
      for (const auto& [node, replica] : step->second) {
        absl::StrAppend(&text, " ", node, replica ? " (replica)" : "");
      }
    }
  }
  return text;
}

std::set<std::string> MemoryCheckpointLedger::HoldersOf(uint64_t job) const {
  std::set<std::string> holders;
  auto it = held_.find(job);
  if (it == held_.end()) return holders;
  for (const auto& [rank, steps] : it->second) {
    for (const auto& [step, nodes] : steps) {
      for (const auto& [node, replica] : nodes) holders.insert(node);
    }
  }
  return holders;
}

std::set<uint64_t> MemoryCheckpointLedger::JobsOn(
    const std::string& node) const {
  auto it = jobs_by_node_.find(node);
  return it == jobs_by_node_.end() ? std::set<uint64_t>{} : it->second;
}

const std::map<uint32_t, MemoryCheckpointLedger::Steps>*
MemoryCheckpointLedger::WholeWorld(uint64_t job, uint32_t world) const {
  auto it = held_.find(job);
  if (it == held_.end() || world == 0) return nullptr;
  for (uint32_t rank = 0; rank < world; ++rank) {
    if (!it->second.contains(rank)) return nullptr;
  }
  return &it->second;
}

std::optional<int64_t> MemoryCheckpointLedger::ProtectedStep(
    uint64_t job, uint32_t world, const Apart& apart) const {
  const std::map<uint32_t, Steps>* ranks = WholeWorld(job, world);
  if (ranks == nullptr) return std::nullopt;
  auto safe = [&](const Holders& holders) {
    for (auto a = holders.begin(); a != holders.end(); ++a) {
      for (auto b = std::next(a); b != holders.end(); ++b) {
        if (apart(a->first, b->first)) return true;
      }
    }
    return false;
  };
  // Candidates: the steps of the first rank, newest first.
  const Steps& first = ranks->begin()->second;
  for (auto step = first.rbegin(); step != first.rend(); ++step) {
    const bool everywhere =
        std::all_of(ranks->begin(), ranks->end(), [&](const auto& r) {
          auto found = r.second.find(step->first);
          return found != r.second.end() && safe(found->second);
        });
    if (everywhere) return step->first;
  }
  return std::nullopt;
}

std::optional<MemoryCheckpointLedger::Restore>
MemoryCheckpointLedger::PlanRestore(
    uint64_t job, uint32_t world, const std::vector<std::string>& old_nodes,
    const std::vector<std::string>& new_nodes,
    const std::function<bool(const std::string&)>& usable) const {
  const std::map<uint32_t, Steps>* ranks = WholeWorld(job, world);
  if (ranks == nullptr || old_nodes.size() != new_nodes.size()) {
    return std::nullopt;
  }
  // Where each rank goes: the new node in the place of the one that ran it
  // (the node holding its own snapshot, newest first).
  std::map<uint32_t, std::string> destination;
  for (const auto& [rank, steps] : (*ranks)) {
    for (auto step = steps.rbegin();
         step != steps.rend() && !destination.contains(rank); ++step) {
      for (const auto& [node, replica] : step->second) {
        if (replica) continue;
        auto place = std::find(old_nodes.begin(), old_nodes.end(), node);
        if (place == old_nodes.end()) continue;
        destination[rank] = new_nodes[place - old_nodes.begin()];
        break;
      }
    }
    if (!destination.contains(rank)) return std::nullopt;
  }
  const Steps& first = (*ranks).begin()->second;
  for (auto step = first.rbegin(); step != first.rend(); ++step) {
    Restore restore;
    restore.step = step->first;
    bool complete = true;
    for (const auto& [rank, steps] : (*ranks)) {
      auto found = steps.find(step->first);
      if (found == steps.end()) {
        complete = false;
        break;
      }
      const std::string& to = destination.at(rank);
      // The node that runs it, when it holds it; else any usable holder.
      std::string from;
      if (found->second.contains(to) && usable(to)) {
        from = to;
      } else {
        for (const auto& [node, replica] : found->second) {
          if (usable(node)) {
            from = node;
            break;
          }
        }
      }
      if (from.empty()) {
        complete = false;
        break;
      }
      restore.by_node[to].push_back({.rank = rank, .holder = from});
    }
    if (complete) return restore;
  }
  return std::nullopt;
}

std::map<std::string, std::string> ChooseMemoryCheckpointPeers(
    const std::vector<std::string>& job_nodes,
    const std::vector<std::string>& candidates,
    const MemoryCheckpointLedger::Apart& apart) {
  std::map<std::string, std::string> peers;
  std::map<std::string, size_t> given;
  const std::set<std::string> in_job(job_nodes.begin(), job_nodes.end());
  const std::set<std::string> usable(candidates.begin(), candidates.end());
  for (size_t i = 0; i < job_nodes.size(); ++i) {
    const std::string& node = job_nodes[i];
    if (!usable.contains(node)) continue;
    // The job's own nodes, starting after this one (a ring spreads the
    // load), then the others, each time the least loaded.
    std::vector<std::string> order;
    for (size_t k = 1; k < job_nodes.size(); ++k) {
      order.push_back(job_nodes[(i + k) % job_nodes.size()]);
    }
    std::vector<std::string> others;
    for (const std::string& candidate : candidates) {
      if (!in_job.contains(candidate)) others.push_back(candidate);
    }
    std::stable_sort(others.begin(), others.end(),
                     [&](const std::string& a, const std::string& b) {
                       return given[a] < given[b];
                     });
    order.insert(order.end(), others.begin(), others.end());
    std::string chosen;
    for (const std::string& candidate : order) {
      if (candidate != node && usable.contains(candidate) &&
          apart(node, candidate)) {
        chosen = candidate;
        break;
      }
    }
    if (chosen.empty()) {
      // No other failure domain: at least another node.
      for (const std::string& candidate : order) {
        if (candidate != node && usable.contains(candidate)) {
          chosen = candidate;
          break;
        }
      }
    }
    if (chosen.empty()) continue;
    peers[node] = chosen;
    ++given[chosen];
  }
  return peers;
}

std::string MemoryCheckpointLedger::NewToken() {
  return absl::StrFormat("%016x%016x", random_(), random_());
}

}  // namespace gantry
