// The cluster as the controller holds it: every job and node it knows,
// with the indexes its hot paths walk instead of the whole tables, and the
// counters stored beside them. Plain data the controller's concerns share
// (they all run on the loop thread); the one invariant, that the indexes
// follow each job's state, is kept by Reindex.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "daemon/controller/core/agent_link.h"
#include "daemon/controller/core/controller_runtime.h"

namespace gantry {

struct ClusterState {
  // Call after a job's state or its occupied nodes change.
  void Reindex(JobRuntime& job);
  // The stored record of the job or node of that id or name; null when
  // there is none.
  const v1::JobRecord* FindJobRecord(uint64_t id) const;
  const v1::NodeRecord* FindNodeRecord(const std::string& name) const;

  std::map<uint64_t, JobRuntime> jobs;
  // The jobs a scheduling pass looks at: pending, running, or still holding
  // node shares. Finished jobs stay in `jobs` until retired; passes must
  // not pay for them.
  std::map<uint64_t, JobRuntime*> live_jobs;
  // The live jobs whose clocks each tick checks: running ones, and pending
  // ones with a --deadline. A tick must not walk every pending job: 50,000
  // of them were a tenth of an idle gantryd's CPU.
  std::map<uint64_t, JobRuntime*> timed_jobs;
  // Never erased from, so pointers to its entries stay valid.
  std::map<std::string, NodeRuntime> nodes;
  // The node each registered stream speaks for: every heartbeat finds its
  // node here (a hash lookup, not a walk of the names).
  std::unordered_map<const AgentLink*, NodeRuntime*> link_nodes;
  // Random, chosen at the first start (see ChooseMasterPort).
  uint64_t cluster_id = 0;
  uint64_t next_job_id = 1;
  uint64_t finished_jobs = 0;
  // Finished jobs in memory by when they ended (roughly: one that could not
  // leave yet goes to the back), for retirement.
  std::deque<std::pair<int64_t, uint64_t>> finished_order;
};

}  // namespace gantry
