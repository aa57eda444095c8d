#include "cli/slurm/squeue_format.h"

#include <grp.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/slurm/long_fields.h"
#include "cli/slurm/percent_format.h"
#include "cli/slurm/slurm_words.h"
#include "cli/slurm/squeue_fields.h"
#include "cli/views/group_name.h"
#include "cli/views/output_format.h"
#include "common/hostlist.h"
#include "common/ids.h"

namespace gantry::cli {
namespace {

const char* HeaderOf(char letter) {
  switch (letter) {
    case 'i':
    case 'A':
      return "JOBID";
    case 'F':
      return "ARRAY_JOB_ID";
    case 'K':
      return "ARRAY_TASK_ID";
    case 'j':
      return "NAME";
    case 'u':
      return "USER";
    case 'U':
      return "UID";
    case 'g':
      return "GROUP";
    case 'G':
      return "GID";
    case 'P':
      return "PARTITION";
    case 'T':
      return "STATE";
    case 't':
      return "ST";
    case 'M':
      return "TIME";
    case 'l':
      return "TIME_LIMIT";
    case 'L':
      return "TIME_LEFT";
    case 'D':
      return "NODES";
    case 'C':
      return "CPUS";
    case 'c':
      return "MIN_CPUS";
    case 'm':
      return "MIN_MEMORY";
    case 'd':
      return "MIN_TMP_DISK";
    case 'b':
      return "TRES_PER_NODE";
    case 'R':
      return "NODELIST(REASON)";
    case 'r':
      return "REASON";
    case 'N':
      return "NODELIST";
    case 'n':
      return "REQ_NODES";
    case 'x':
      return "EXC_NODES";
    case 'B':
      return "EXEC_HOST";
    case 'Y':
      return "SCHEDNODES";
    case 'V':
      return "SUBMIT_TIME";
    case 'S':
      return "START_TIME";
    case 'e':
      return "END_TIME";
    case 'a':
      return "ACCOUNT";
    case 'q':
      return "QOS";
    case 'Q':
    case 'p':
      return "PRIORITY";
    case 'E':
      return "DEPENDENCY";
    case 'f':
      return "FEATURES";
    case 'k':
      return "COMMENT";
    case 'y':
      return "NICE";
    case 'v':
      return "RESERVATION";
    case 'Z':
      return "WORK_DIR";
    case 'o':
      return "COMMAND";
    case 'h':
      return "OVER_SUBSCRIBE";
    case 'H':
      return "SOCKETS_PER_NODE";
    case 'I':
      return "CORES_PER_SOCKET";
    case 'J':
      return "THREADS_PER_CORE";
    case 'z':
      return "S:C:T";
    case 'O':
      return "CONTIGUOUS";
    case 'W':
      return "LICENSES";
    case 'w':
      return "WCKEY";
    case 's':
      return "SELECT_JOB_INFO";
    case kMaxNodesField:
      return "MAX_NODES";
  }
  return "";
}

std::string TimeOrNa(int64_t epoch_ms) {
  return epoch_ms > 0 ? FormatTime(epoch_ms) : "N/A";
}

int64_t JobElapsedSeconds(int64_t start_ms, int64_t end_ms, int64_t now_ms) {
  if (start_ms <= 0) return 0;
  return ((end_ms ? end_ms : now_ms) - start_ms) / 1000;
}

uint32_t CpuCount(const v1::JobRecord& job) {
  uint32_t cpus = 0;
  for (const v1::NodeAllocation& share : job.allocation()) cpus += share.cpus();
  if (cpus > 0) return cpus;
  const v1::JobSpec& spec = job.spec();
  const uint32_t tasks =
      spec.ntasks() ? spec.ntasks() : spec.nodes() * spec.ntasks_per_node();
  return std::max<uint32_t>(tasks, 1) *
         (spec.cpus_per_task() ? spec.cpus_per_task() : 1);
}

// The end a running job is expected to reach: its start plus its limit.
int64_t JobEndOrLimitMs(const v1::JobRecord& job) {
  if (job.end_time_ms() > 0) return job.end_time_ms();
  if (job.start_time_ms() > 0 && job.spec().time_limit_seconds() > 0) {
    return job.start_time_ms() +
           static_cast<int64_t>(job.spec().time_limit_seconds()) * 1000;
  }
  return 0;
}

std::string StepValue(char letter, const v1::JobRecord& job,
                      const v1::StepRecord& step, int64_t now_ms) {
  switch (letter) {
    case 'i':
    case 'A':
      return absl::StrCat(job.id(), ".", SlurmStepNumber(step.id()));
    case 'j':
      return step.name().empty() ? job.spec().name() : step.name();
    case 'M':
      return FormatDuration(
          JobElapsedSeconds(step.start_time_ms(), step.end_time_ms(), now_ms));
    case 'N':
      return CompressHostlist(StepNodeNames(step));
    case 'S':
      return TimeOrNa(step.start_time_ms());
  }
  return SqueueValue(letter, job, now_ms);
}

}  // namespace

std::string SqueueValue(char letter, const v1::JobRecord& job, int64_t now_ms,
                        const v1::StepRecord* step) {
  if (step != nullptr) return StepValue(letter, job, *step, now_ms);
  const v1::JobSpec& spec = job.spec();
  const bool pending = job.state() == v1::PENDING;
  switch (letter) {
    case 'i':
      // squeue's ARRAYID_TASK form for a task of an array.
      return job.array_job_id()
                 ? absl::StrCat(job.array_job_id(), "_", job.array_task_id())
                 : absl::StrCat(job.id());
    case 'A':
      return absl::StrCat(job.id());
    case 'F':
      return absl::StrCat(job.array_job_id() ? job.array_job_id() : job.id());
    case 'K':
      return job.array_job_id() ? absl::StrCat(job.array_task_id()) : "N/A";
    case 'j':
      return spec.name();
    case 'u':
      return job.user();
    case 'U':
      return absl::StrCat(job.uid());
    case 'g':
      return GroupName(job.gid());
    case 'G':
      return absl::StrCat(job.gid());
    case 'P':
      return spec.partition();
    case 'T':
      return StateName(job.state());
    case 't':
      return StateShort(job.state());
    case 'M':
      return FormatDuration(
          JobElapsedSeconds(job.start_time_ms(), job.end_time_ms(), now_ms));
    case 'l':
      return spec.time_limit_seconds() ? FormatDuration(static_cast<int64_t>(
                                             spec.time_limit_seconds()))
                                       : "UNLIMITED";
    case 'L':
      if (!spec.time_limit_seconds()) return "UNLIMITED";
      return FormatDuration(
          static_cast<int64_t>(spec.time_limit_seconds()) -
          JobElapsedSeconds(job.start_time_ms(), job.end_time_ms(), now_ms));
    case 'D':
      // Slurm's NODES: allocated, or the least a pending job needs (the
      // MIN of --nodes=MIN-MAX).
      return absl::StrCat(
          job.allocation_size() > 0
              ? static_cast<uint32_t>(job.allocation_size())
              : std::max<uint32_t>(
                    spec.min_nodes() > 0 ? spec.min_nodes() : spec.nodes(), 1));
    case 'C':
      return absl::StrCat(CpuCount(job));
    case 'c':
      return absl::StrCat(spec.cpus_per_task() ? spec.cpus_per_task() : 1);
    case 'm':
      return spec.mem_per_node_mb() ? absl::StrCat(spec.mem_per_node_mb(), "M")
                                    : "0";
    case 'd':
      return "0";
    case 'b':
      if (spec.gpus_per_node() == 0) return "N/A";
      return spec.gpu_type().empty()
                 ? absl::StrCat("gres/gpu:", spec.gpus_per_node())
                 : absl::StrCat("gres/gpu:", spec.gpu_type(), ":",
                                spec.gpus_per_node());
    case 'R':
      if (pending || job.allocation_size() == 0) {
        return absl::StrCat("(", job.reason().empty() ? "None" : job.reason(),
                            ")");
      }
      return JobNodeList(job);
    case 'r':
      return job.reason().empty() ? "None" : job.reason();
    case 'N':
      return JobNodeList(job);
    case 'n':
      return CompressHostlist(
          {spec.required_nodes().begin(), spec.required_nodes().end()});
    case 'x':
      return CompressHostlist(
          {spec.excluded_nodes().begin(), spec.excluded_nodes().end()});
    case 'B':
      return job.allocation_size() > 0 ? job.allocation(0).node() : "n/a";
    case 'Y':
      return "(null)";
    case 'V':
      return TimeOrNa(job.submit_time_ms());
    case 'S':
      // Pending: when the backfill reservation expects it, else unknown.
      return TimeOrNa(pending ? job.expected_start_time_ms()
                              : job.start_time_ms());
    case 'e':
      return TimeOrNa(JobEndOrLimitMs(job));
    case 'a':
      return OrNull(spec.account());
    case 'q':
      return JobQos(spec);
    case 'Q':
      // Priority means something only while the job waits.
      return pending ? absl::StrCat(static_cast<int64_t>(job.priority())) : "0";
    case 'p':
      return absl::StrCat(pending ? job.priority() : 0.0);
    case 'E':
      return OrNull(spec.dependency());
    case 'f':
      return OrNull(spec.constraint());
    case 'k':
    case 'v':
    case 'W':
    case 'w':
    case 's':
      return "(null)";
    case 'y':
      return "0";
    case 'Z':
      return spec.working_dir();
    case 'o':
      return OrNull(spec.script_path());
    case 'h':
      return spec.exclusive() ? "NO" : "OK";
    case 'H':
    case 'I':
    case 'J':
      return "*";
    case 'z':
      return "*:*:*";
    case 'O':
      return "0";
    case kMaxNodesField:
      // The size asked for: the MAX of --nodes=MIN-MAX (NODES, %D, is
      // what the current attempt holds).
      return absl::StrCat(std::max<uint32_t>(spec.nodes(), 1));
  }
  return "";
}

absl::StatusOr<SqueueFormat> SqueueFormat::Parse(std::string_view format,
                                                 std::vector<char>* unknown) {
  absl::StatusOr<PercentFormat> parsed =
      PercentFormat::Parse(PercentFormat::ExpandAll(format, kSqueueLetters),
                           kSqueueLetters, unknown);
  if (!parsed.ok()) return parsed.status();
  SqueueFormat squeue;
  squeue.format_ = *std::move(parsed);
  // As squeue: a padded last field keeps its blanks.
  squeue.format_.KeepTrailingBlanks();
  return squeue;
}

absl::StatusOr<SqueueFormat> SqueueFormat::ParseFields(
    std::string_view fields) {
  absl::StatusOr<std::vector<LongField>> parsed = ParseLongFields(
      fields, [](std::string_view name) { return SqueueFieldLetter(name); },
      SqueueFieldNames());
  if (!parsed.ok()) return parsed.status();
  SqueueFormat squeue;
  for (const LongField& field : *parsed) {
    squeue.format_.AddField(field.letter, field.width, field.right,
                            field.suffix);
  }
  squeue.format_.KeepTrailingBlanks();
  return squeue;
}

std::string SqueueFormat::Header() const { return format_.Header(&HeaderOf); }

std::string SqueueFormat::StepHeader() const {
  return format_.Header([](char letter) {
    return letter == 'i' || letter == 'A' ? "STEPID" : HeaderOf(letter);
  });
}

std::string SqueueFormat::Row(const v1::JobRecord& job, int64_t now_ms,
                              const std::string& folded_tasks) const {
  std::vector<std::string> values;
  for (char letter : format_.Fields()) {
    if (!folded_tasks.empty() && letter == 'i') {
      values.push_back(absl::StrCat(job.array_job_id(), "_", folded_tasks));
    } else if (!folded_tasks.empty() && letter == 'K') {
      values.push_back(folded_tasks);
    } else {
      values.push_back(SqueueValue(letter, job, now_ms));
    }
  }
  return format_.Render(values);
}

std::string SqueueFormat::StepRow(const v1::JobRecord& job,
                                  const v1::StepRecord& step,
                                  int64_t now_ms) const {
  std::vector<std::string> values;
  for (char letter : format_.Fields()) {
    values.push_back(SqueueValue(letter, job, now_ms, &step));
  }
  return format_.Render(values);
}

std::vector<SqueueLine> FoldPendingArrayTasks(
    const std::vector<const v1::JobRecord*>& jobs) {
  // Pending tasks by array, in the order the arrays first appear.
  std::map<uint64_t, std::vector<const v1::JobRecord*>> pending;
  for (const v1::JobRecord* job : jobs) {
    if (job->array_job_id() != 0 && job->state() == v1::PENDING) {
      pending[job->array_job_id()].push_back(job);
    }
  }
  std::vector<SqueueLine> lines;
  for (const v1::JobRecord* job : jobs) {
    auto group = job->array_job_id() != 0 && job->state() == v1::PENDING
                     ? pending.find(job->array_job_id())
                     : pending.end();
    if (group == pending.end() || group->second.size() < 2) {
      lines.push_back({job, ""});
      continue;
    }
    if (group->second.front() != job) continue;  // folded into the first
    std::vector<uint32_t> indices;
    for (const v1::JobRecord* task : group->second) {
      indices.push_back(task->array_task_id());
    }
    std::sort(indices.begin(), indices.end());
    std::string ranges;
    for (std::size_t i = 0; i < indices.size();) {
      std::size_t j = i;
      while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
      if (!ranges.empty()) ranges += ",";
      ranges += j > i ? absl::StrCat(indices[i], "-", indices[j])
                      : absl::StrCat(indices[i]);
      i = j + 1;
    }
    if (job->array().max_running() > 0) {
      absl::StrAppend(&ranges, "%", job->array().max_running());
    }
    lines.push_back({job, absl::StrCat("[", ranges, "]")});
  }
  return lines;
}

}  // namespace gantry::cli
