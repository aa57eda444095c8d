// Limits on what one request to gantryd may carry, shared by the
// controller (which enforces them) and the CLI (which checks them before
// sending, so that too large is an immediate error that names the limit
// instead of a transport failure). Constants only; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gantry::limits {

// The whole batch script of one job. Every task of an array stores its own
// copy, and the script travels to each node the job starts on.
inline constexpr size_t kMaxBatchScriptBytes = 4 << 20;

// gantryd's receive limit for a client request (a SubmitRequest with its
// script and environment, a fabric dump). Larger messages are refused by
// gRPC with RESOURCE_EXHAUSTED before gantryd sees them.
inline constexpr size_t kMaxClientRequestBytes = 16 << 20;

// How gantryd's answer to a submission it has no room for begins
// (RESOURCE_EXHAUSTED): the one RESOURCE_EXHAUSTED a client should retry.
// gRPC's own RESOURCE_EXHAUSTED (a message over the size limit) is final.
inline constexpr char kBusyMessagePrefix[] = "gantryd is busy";

// --time, --hang-timeout, --switches' wait: one year. Slurm's largest
// finite limit is about 11 years (2^32-2 minutes, with 2^32-1 meaning
// INFINITE); no batch job runs for a year, a job that should run forever
// asks for no limit (0), and a year in milliseconds is far from overflowing
// the int64 deadlines computed from it.
inline constexpr uint64_t kMaxDurationSeconds = 365ull * 24 * 3600;

// --mem: a petabyte per node, in MB; the same bound agents' inventories
// are held to. Times 100,000 nodes it still fits a uint64.
inline constexpr uint64_t kMaxMemoryPerNodeMb = uint64_t{1} << 30;

// Counts in a job's request. Anything above is a typo (an extra zero, a
// pasted number), and refusing it gives a clearer message than "no
// cluster can ever run this" from the scheduler.
inline constexpr uint32_t kMaxNodes = 100'000;
inline constexpr uint32_t kMaxTasks = 10'000'000;  // a job's --ntasks
// --ntasks-per-node, and --ntasks-per-gpu (a GPU's tasks are its node's).
inline constexpr uint32_t kMaxTasksPerNode = 4096;
inline constexpr uint32_t kMaxCpusPerTask = 4096;
// --gpus-per-node (and scontrol update's): more than any server holds.
inline constexpr uint32_t kMaxGpusPerNode = 64;
// --gpus counts the whole job's: 64 on each of 4096 nodes.
inline constexpr uint32_t kMaxGpusPerJob = kMaxGpusPerNode * 4096;

// --begin: the end of year 9999, in ms since the epoch.
inline constexpr int64_t kMaxBeginTimeMs = 253'402'300'799'999;

// Names shown in listings (job name, partition, features, node names in
// lists), and free text shown to admins (drain reasons, comments).
inline constexpr size_t kMaxNameBytes = 256;
inline constexpr size_t kMaxReasonBytes = 1024;
inline constexpr size_t kMaxPathBytes = 4096;

// Nodes one `gantry cache` request names (a Slurm hostlist range's own
// limit).
inline constexpr size_t kMaxCacheRequestNodes = 65536;

}  // namespace gantry::limits
