// Turning controller records into what users read: Slurm-like tables and
// key=value views, and the stable JSON of `--json`. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gantry/v1/client.pb.h"

namespace gantry::cli {

// "PENDING", "RUNNING", ...; squeue's short form "PD", "R", "CD", "F", "CA",
// "TO", "NF", "OOM".
std::string StateName(v1::JobState state);
std::string StateShort(v1::JobState state);
std::string NodeStateName(v1::NodeState state);

// Slurm's elapsed-time form: "M:SS", "H:MM:SS", "D-HH:MM:SS".
std::string FormatDuration(int64_t seconds);
// ISO-8601 local time, "Unknown" for 0.
std::string FormatTime(int64_t epoch_ms);

// The hostlist of the job's allocation ("" when not started).
std::string JobNodeList(const v1::JobRecord& job);
// The job's QOS: what it was given, else Slurm's default, "normal" (jobs
// stored before gantryd filled it in).
std::string JobQos(const v1::JobSpec& spec);

// A step's task count and its nodes, in order.
uint32_t StepTaskCount(const v1::StepRecord& step);
std::vector<std::string> StepNodeNames(const v1::StepRecord& step);

// Aligned columns; the first row is the header. Numeric-looking cells are
// right-aligned.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows);

// A staged-ahead copy's state as `gantry job` shows it: copying, done,
// failed.
const char* StagedAheadStateName(v1::DatasetStagedAhead::State state);

nlohmann::json JobToJson(const v1::JobRecord& job, int64_t now_ms);
nlohmann::json NodeToJson(const v1::NodeRecord& node);
nlohmann::json EventToJson(const v1::EventRecord& event);

}  // namespace gantry::cli
