#include "cli/slurm/squeue_format.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "cli/output_format.h"
#include "cli/slurm/percent_format.h"

namespace gantry::cli {
namespace {

constexpr char kLetters[] = "iAFKjuPTtMlLDCbRNVSeraQEf";

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
    case 'b':
      return "TRES_PER_NODE";
    case 'R':
      return "NODELIST(REASON)";
    case 'N':
      return "NODELIST";
    case 'V':
      return "SUBMIT_TIME";
    case 'S':
      return "START_TIME";
    case 'e':
      return "END_TIME";
    case 'r':
      return "REASON";
    case 'a':
      return "ACCOUNT";
    case 'Q':
      return "PRIORITY";
    case 'E':
      return "DEPENDENCY";
    case 'f':
      return "FEATURES";
  }
  return "";
}

std::string TimeOrNa(int64_t epoch_ms) {
  return epoch_ms > 0 ? FormatTime(epoch_ms) : "N/A";
}

int64_t ElapsedSeconds(const v1::JobRecord& job, int64_t now_ms) {
  if (job.start_time_ms() <= 0) return 0;
  return ((job.end_time_ms() ? job.end_time_ms() : now_ms) -
          job.start_time_ms()) /
         1000;
}

uint32_t CpuCount(const v1::JobRecord& job) {
  uint32_t cpus = 0;
  for (const v1::NodeAllocation& share : job.allocation()) cpus += share.cpus();
  if (cpus > 0) return cpus;
  const v1::JobSpec& spec = job.spec();
  const uint32_t tasks =
      spec.ntasks() ? spec.ntasks() : spec.nodes() * spec.ntasks_per_node();
  return tasks * (spec.cpus_per_task() ? spec.cpus_per_task() : 1);
}

std::string Value(char letter, const v1::JobRecord& job, int64_t now_ms) {
  const v1::JobSpec& spec = job.spec();
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
    case 'P':
      return spec.partition();
    case 'T':
      return StateName(job.state());
    case 't':
      return StateShort(job.state());
    case 'M':
      return FormatDuration(ElapsedSeconds(job, now_ms));
    case 'l':
      return spec.time_limit_seconds() ? FormatDuration(static_cast<int64_t>(
                                             spec.time_limit_seconds()))
                                       : "UNLIMITED";
    case 'L':
      if (!spec.time_limit_seconds()) return "UNLIMITED";
      return FormatDuration(static_cast<int64_t>(spec.time_limit_seconds()) -
                            ElapsedSeconds(job, now_ms));
    case 'D':
      return absl::StrCat(job.allocation_size() > 0 ? job.allocation_size()
                                                    : spec.nodes());
    case 'C':
      return absl::StrCat(CpuCount(job));
    case 'b':
      if (spec.gpus_per_node() == 0) return "N/A";
      return spec.gpu_type().empty()
                 ? absl::StrCat("gres/gpu:", spec.gpus_per_node())
                 : absl::StrCat("gres/gpu:", spec.gpu_type(), ":",
                                spec.gpus_per_node());
    case 'R':
      if (job.state() == v1::PENDING || job.allocation_size() == 0) {
        return absl::StrCat("(", job.reason().empty() ? "None" : job.reason(),
                            ")");
      }
      return JobNodeList(job);
    case 'N':
      return JobNodeList(job);
    case 'V':
      return TimeOrNa(job.submit_time_ms());
    case 'S':
      return TimeOrNa(job.start_time_ms());
    case 'e':
      return TimeOrNa(job.end_time_ms());
    case 'r':
      return job.reason().empty() ? "None" : job.reason();
    case 'a':
      // Gantry has no accounts yet: what squeue shows for a job without one.
      return "(null)";
    case 'E':
      return spec.dependency().empty() ? "(null)" : spec.dependency();
    case 'f':
      return spec.constraint().empty() ? "(null)" : spec.constraint();
    case 'Q':
      // Priority means something only while the job waits.
      return job.state() == v1::PENDING
                 ? absl::StrCat(static_cast<int64_t>(job.priority()))
                 : "0";
  }
  return "";
}

}  // namespace

absl::StatusOr<SqueueFormat> SqueueFormat::Parse(std::string_view format) {
  absl::StatusOr<PercentFormat> parsed = PercentFormat::Parse(format, kLetters);
  if (!parsed.ok()) return parsed.status();
  SqueueFormat squeue;
  squeue.format_ = *std::move(parsed);
  return squeue;
}

std::string SqueueFormat::Header() const { return format_.Header(&HeaderOf); }

std::string SqueueFormat::Row(const v1::JobRecord& job, int64_t now_ms,
                              const std::string& folded_tasks) const {
  std::vector<std::string> values;
  for (char letter : format_.Fields()) {
    if (!folded_tasks.empty() && letter == 'i') {
      values.push_back(absl::StrCat(job.array_job_id(), "_", folded_tasks));
    } else if (!folded_tasks.empty() && letter == 'K') {
      values.push_back(folded_tasks);
    } else {
      values.push_back(Value(letter, job, now_ms));
    }
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
