#include "daemon/controller/features/datasets/dataset_requests.h"

#include <utility>

namespace gantry {

uint64_t DatasetRequests::Add(DatasetRequest request) {
  request.id = next_id_++;
  request.done = false;
  const uint64_t id = request.id;
  requests_.emplace(id, std::move(request));
  return id;
}

bool DatasetRequests::Finish(const std::string& node,
                             const v1::DatasetCacheResult& result,
                             int64_t now_ms) {
  auto it = requests_.find(result.request_id());
  if (it == requests_.end() || it->second.done || it->second.node != node) {
    return false;
  }
  it->second.done = true;
  it->second.done_ms = now_ms;
  it->second.result = result;
  ++finished_;
  Trim();
  return true;
}

void DatasetRequests::NodeGone(const std::string& node, int64_t now_ms) {
  for (auto& [id, request] : requests_) {
    if (request.done || request.node != node) continue;
    request.done = true;
    request.done_ms = now_ms;
    request.result.set_request_id(id);
    request.result.set_ok(false);
    request.result.set_message("node " + node +
                               " lost its connection before answering");
    ++finished_;
  }
  Trim();
}

void DatasetRequests::Trim() {
  for (auto it = requests_.begin();
       finished_ > kKeepFinished && it != requests_.end();) {
    if (it->second.done) {
      it = requests_.erase(it);
      --finished_;
    } else {
      ++it;
    }
  }
}

const DatasetRequest* DatasetRequests::Find(uint64_t id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : &it->second;
}

std::vector<const DatasetRequest*> DatasetRequests::ForJob(uint64_t job) const {
  std::vector<const DatasetRequest*> out;
  for (const auto& [id, request] : requests_) {
    if (job != 0 && request.job_id == job) out.push_back(&request);
  }
  return out;
}

std::vector<const DatasetRequest*> DatasetRequests::All() const {
  std::vector<const DatasetRequest*> out;
  out.reserve(requests_.size());
  for (const auto& [id, request] : requests_) out.push_back(&request);
  return out;
}

}  // namespace gantry
