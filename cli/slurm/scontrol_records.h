// scontrol show job / show partition / show config records, in Slurm
// 22.05's layout and key names: "JobId=12 JobName=x" then indented
// "Key=value" lines, so that scripts that pick fields out of it
// (JobState=, Priority=, Command=, ...) work unchanged.
//
// Pure (apart from group names from the group database); thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gantry/v1/client.pb.h"

namespace gantry::cli {

// scontrol's durations: "HH:MM:SS", "D-HH:MM:SS" past a day.
std::string ScontrolDuration(int64_t seconds);

// One job's record, ending in "\n". `details` > 0 (scontrol -d): the
// per-node allocation lines as well.
std::string ScontrolJobRecord(const v1::JobRecord& job, int64_t now_ms,
                              int details);

// One partition's record. `nodes`: every node, for the partition's totals.
std::string ScontrolPartitionRecord(const v1::PartitionInfo& partition,
                                    const std::vector<v1::NodeRecord>& nodes);

// One node's record (scontrol show node): State= in Slurm's words (IDLE,
// MIXED, ALLOCATED, IDLE+DRAIN, MIXED+DRAIN, DOWN*, ...), Reason= with who
// set it and when.
std::string ScontrolNodeRecord(const v1::NodeRecord& node);

// scontrol -o: a record on one line (its lines joined by blanks).
std::string OneLine(const std::string& record);

}  // namespace gantry::cli
