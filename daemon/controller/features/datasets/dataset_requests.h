// The dataset cache requests gantryd has sent to agents (DatasetPrefetch,
// DatasetEvict) and how each ended, for `gantry cache` and for staging a
// waiting job's datasets ahead onto its reserved nodes.
//
// In memory only: after a controller restart, whoever wanted a request
// sends it again (staging ahead on its next pass, a user by running the
// command again). A prefetch of a copy already there is a cheap hit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gantry/v1/agent.pb.h"

namespace gantry {

// Whose dataset a request copies or drops: the copy is made with the
// owner's credentials on the node.
struct DatasetOwner {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;
};

struct DatasetRequest {
  enum class Kind { kPrefetch, kEvict };
  uint64_t id = 0;  // assigned by DatasetRequests::Add
  Kind kind = Kind::kPrefetch;
  std::string node;
  uint32_t owner_uid = 0;
  std::string dataset;  // its NAME
  std::string path;     // a prefetch's source
  uint64_t job_id = 0;  // a prefetch staged ahead for this waiting job
  int64_t sent_ms = 0;
  bool done = false;
  int64_t done_ms = 0;
  // The agent's answer once done (or, where the node's stream ended
  // first, ok false and why).
  v1::DatasetCacheResult result;
};

class DatasetRequests {
 public:
  // How many finished requests are kept (the oldest go first).
  static constexpr size_t kKeepFinished = 4096;

  // Records a request about to be sent; returns its id.
  uint64_t Add(DatasetRequest request);
  // Records `node`'s answer. False (and nothing changes) when `node` has no
  // open request of that id: a stale or forged answer.
  bool Finish(const std::string& node, const v1::DatasetCacheResult& result,
              int64_t now_ms);
  // The node's stream ended: its open requests fail with that reason.
  void NodeGone(const std::string& node, int64_t now_ms);

  const DatasetRequest* Find(uint64_t id) const;
  // Requests staged ahead for `job`, oldest first.
  std::vector<const DatasetRequest*> ForJob(uint64_t job) const;
  // Every request kept, oldest first.
  std::vector<const DatasetRequest*> All() const;

 private:
  void Trim();

  uint64_t next_id_ = 1;
  std::map<uint64_t, DatasetRequest> requests_;
  size_t finished_ = 0;
};

}  // namespace gantry
