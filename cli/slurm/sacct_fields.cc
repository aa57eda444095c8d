#include "cli/slurm/sacct_fields.h"

#include <algorithm>
#include <ctime>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/views/output_format.h"
#include "common/hostlist.h"
#include "common/ids.h"
#include "common/job_restarts.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

using Kind = SacctRow::Kind;

bool Started(const v1::JobRecord& job) { return job.start_time_ms() > 0; }
bool Ended(const v1::JobRecord& job) {
  return job.state() != v1::PENDING && job.state() != v1::RUNNING;
}

int64_t StartMs(const SacctRow& row) {
  return row.kind == Kind::kStep ? row.step->start_time_ms()
                                 : row.job->start_time_ms();
}
// 0 while it runs.
int64_t EndMs(const SacctRow& row) {
  if (row.kind == Kind::kStep) return row.step->end_time_ms();
  return Ended(*row.job) ? row.job->end_time_ms() : 0;
}

int64_t ElapsedSeconds(const SacctRow& row, const SacctContext& context) {
  const int64_t start = StartMs(row);
  if (start <= 0) return 0;
  const int64_t end = EndMs(row) > 0 ? EndMs(row) : context.now_ms;
  return std::max<int64_t>(0, (end - start) / 1000);
}

std::vector<std::string> NodesOf(const SacctRow& row) {
  std::vector<std::string> nodes;
  if (row.kind == Kind::kStep) {
    for (const v1::NodeAllocation& a : row.step->nodes()) {
      nodes.push_back(a.node());
    }
  } else {
    for (const v1::NodeAllocation& a : row.job->allocation()) {
      nodes.push_back(a.node());
      if (row.kind == Kind::kBatch) break;
    }
  }
  return nodes;
}

uint32_t AllocCpus(const SacctRow& row) {
  uint32_t cpus = 0;
  if (row.kind == Kind::kStep) {
    for (const v1::NodeAllocation& a : row.step->nodes()) cpus += a.cpus();
    return cpus;
  }
  for (const v1::NodeAllocation& a : row.job->allocation()) {
    cpus += a.cpus();
    if (row.kind == Kind::kBatch) break;
  }
  return cpus;
}

uint32_t AllocGpus(const SacctRow& row) {
  uint32_t gpus = 0;
  const auto& nodes =
      row.kind == Kind::kStep ? row.step->nodes() : row.job->allocation();
  for (const v1::NodeAllocation& a : nodes) {
    gpus += static_cast<uint32_t>(a.gpu_indices_size());
    if (row.kind == Kind::kBatch) break;
  }
  return gpus;
}

uint64_t AllocMemMb(const SacctRow& row) {
  uint64_t mem = 0;
  const auto& nodes =
      row.kind == Kind::kStep ? row.step->nodes() : row.job->allocation();
  for (const v1::NodeAllocation& a : nodes) {
    mem += a.mem_mb();
    if (row.kind == Kind::kBatch) break;
  }
  return mem;
}

uint32_t RequestedNodes(const v1::JobRecord& job) {
  return std::max<uint32_t>(job.spec().nodes(), 1);
}

uint32_t RequestedCpus(const v1::JobRecord& job) {
  const v1::JobSpec& spec = job.spec();
  const uint32_t per_task = std::max<uint32_t>(spec.cpus_per_task(), 1);
  const uint32_t tasks =
      spec.ntasks() > 0
          ? spec.ntasks()
          : RequestedNodes(job) * std::max<uint32_t>(spec.ntasks_per_node(), 1);
  return tasks * per_task;
}

// Slurm's TRES string: billing, cpu, gres/gpu, mem, node (those non-zero).
std::string Tres(uint32_t cpus, uint32_t gpus, uint64_t mem_mb,
                 uint32_t nodes) {
  if (cpus == 0 && nodes == 0) return "";
  std::string text = absl::StrCat("billing=", cpus, ",cpu=", cpus);
  if (gpus > 0) absl::StrAppend(&text, ",gres/gpu=", gpus);
  if (mem_mb > 0) absl::StrAppend(&text, ",mem=", SlurmMemory(mem_mb));
  absl::StrAppend(&text, ",node=", nodes);
  return text;
}

std::string ExitCodeText(int code, int signal) {
  return absl::StrCat(code, ":", signal);
}

// A step's exit status as code:signal, from its tasks' exits.
std::string StepExitCode(const v1::StepRecord& step) {
  int code = 0;
  int signal = 0;
  for (const v1::RankExit& exit : step.exits()) {
    if (exit.signal() != 0) {
      signal = std::max(signal, exit.signal());
    } else {
      code = std::max(code, exit.exit_code());
    }
  }
  if (step.exits().empty() && step.end_time_ms() != 0) {
    code = step.exit_code() > 128 ? 0 : step.exit_code();
    signal = step.exit_code() > 128 ? step.exit_code() - 128 : 0;
  }
  return ExitCodeText(code, signal);
}

std::string StepState(const v1::StepRecord& step) {
  if (step.end_time_ms() == 0) return "RUNNING";
  if (!step.end_detail().empty()) return "CANCELLED";
  return step.exit_code() == 0 ? "COMPLETED" : "FAILED";
}

// The batch script's line: it ends as the job ends, except that a time
// limit, a deadline or a cancel kills it (CANCELLED).
std::string BatchState(const v1::JobRecord& job) {
  switch (job.state()) {
    case v1::TIMEOUT:
    case v1::CANCELLED:
    case v1::DEADLINE:
      return "CANCELLED";
    default:
      return StateName(job.state());
  }
}

std::string JobIdText(const v1::JobRecord& job) {
  return job.array_job_id() != 0
             ? absl::StrCat(job.array_job_id(), "_", job.array_task_id())
             : absl::StrCat(job.id());
}

std::string StepSuffix(const SacctRow& row) {
  switch (row.kind) {
    case Kind::kJob:
      return "";
    case Kind::kBatch:
      return ".batch";
    case Kind::kStep:
      return absl::StrCat(".", SlurmStepNumber(row.step->id()));
  }
  return "";
}

std::string NameOr(const SacctContext& context, uint32_t id) {
  return context.group_name ? context.group_name(id) : absl::StrCat(id);
}

std::string Timelimit(const v1::JobRecord& job) {
  const uint64_t seconds = job.spec().time_limit_seconds();
  if (seconds == 0) return "UNLIMITED";
  return SlurmDuration(static_cast<int64_t>(seconds));
}

// A goodput segment's time (docs/user-guide.md "Goodput"), on the job's line
// only.
std::string GoodputDuration(const SacctRow& row, int64_t milliseconds) {
  if (row.kind != Kind::kJob) return "";
  return SlurmDuration(milliseconds / 1000);
}

// The step's command name, as Slurm names a step after its program.
std::string StepName(const v1::StepRecord& step) {
  if (step.argv().empty()) return "";
  const std::string& program = step.argv(0);
  return program.substr(program.rfind('/') + 1);
}

#define FIELD(NAME, WIDTH, ...)                                               \
  SacctField {                                                                \
    NAME, WIDTH,                                                              \
        [](const SacctRow& row, const SacctContext& context) -> std::string { \
          (void)context;                                                      \
          const v1::JobRecord& job = *row.job;                                \
          (void)job;                                                          \
          __VA_ARGS__                                                         \
        }                                                                     \
  }

const std::vector<SacctField>& Table() {
  static const std::vector<SacctField> kFields = {
      FIELD("Account", 10, return job.spec().account();),
      FIELD("AllocCPUS", 10, return absl::StrCat(AllocCpus(row));),
      FIELD("AllocNodes", 10, return absl::StrCat(NodesOf(row).size());),
      FIELD("AllocTRES", -12,
            return Tres(AllocCpus(row), AllocGpus(row), AllocMemMb(row),
                        static_cast<uint32_t>(NodesOf(row).size()));),
      FIELD("Cluster", 10, return context.cluster;),
      FIELD("CPUTime", 10,
            return SlurmDuration(ElapsedSeconds(row, context) *
                                 AllocCpus(row));),
      FIELD("CPUTimeRAW", 10,
            return absl::StrCat(ElapsedSeconds(row, context) *
                                AllocCpus(row));),
      FIELD(
          "DerivedExitCode", 15, if (row.kind != Kind::kJob) return "";
          int code = 0; int signal = 0;
          for (const v1::StepRecord& step : job.steps()) {
            for (const v1::RankExit& exit : step.exits()) {
              if (exit.signal() != 0) {
                signal = std::max(signal, exit.signal());
              } else {
                code = std::max(code, exit.exit_code());
              }
            }
          } return ExitCodeText(code, signal);),
      FIELD("Elapsed", 10, return SlurmDuration(ElapsedSeconds(row, context));),
      FIELD("ElapsedRaw", 10, return absl::StrCat(ElapsedSeconds(row, context));),
      FIELD("Eligible", 19, if (row.kind == Kind::kStep) {
        return SlurmTime(row.step->start_time_ms());
      } return SlurmTime(std::max({job.submit_time_ms(),
                                   job.spec().begin_time_ms(),
                                   job.eligible_time_ms()}));),
      FIELD("End", 19, return SlurmTime(EndMs(row));),
      // Gantry's goodput (docs/user-guide.md "Goodput"), for the job's line only: the
      // effective training time ratio, and the wall time by segment.
      FIELD("ETTR", 6, if (row.kind != Kind::kJob) return "";
            return absl::StrFormat("%.3f", job.goodput().ettr());),
      FIELD("ExitCode", 8, switch (row.kind) {
        case Kind::kStep:
          return StepExitCode(*row.step);
        default:
          return ExitCodeText(job.exit_code(), job.exit_signal());
      }),
      FIELD("GID", 10, return absl::StrCat(job.gid());),
      FIELD("GoodputDetecting", 10,
            return GoodputDuration(row, job.goodput().detecting_ms());),
      FIELD("GoodputLost", 10,
            return GoodputDuration(row, job.goodput().lost_ms());),
      FIELD("GoodputPreflight", 10,
            return GoodputDuration(row, job.goodput().preflight_ms());),
      FIELD("GoodputProductive", 10,
            return GoodputDuration(row, job.goodput().productive_ms());),
      FIELD("GoodputQueued", 10,
            return GoodputDuration(row, job.goodput().queued_ms());),
      FIELD("GoodputRecovering", 10,
            return GoodputDuration(row, job.goodput().recovering_ms());),
      FIELD("GoodputStarting", 10,
            return GoodputDuration(row, job.goodput().starting_ms());),
      FIELD("Group", 9, return NameOr(context, job.gid());),
      FIELD("JobID", -12, return JobIdText(job) + StepSuffix(row);),
      FIELD("JobIDRaw", -12, return absl::StrCat(job.id()) + StepSuffix(row);),
      FIELD("JobName", 10, switch (row.kind) {
        case Kind::kBatch:
          return "batch";
        case Kind::kStep:
          return StepName(*row.step);
        default:
          return job.spec().name();
      }),
      FIELD("NCPUS", 10, {
        const uint32_t cpus = AllocCpus(row);
        return absl::StrCat(cpus == 0 && row.kind == Kind::kJob
                                ? RequestedCpus(job)
                                : cpus);
      }),
      FIELD("NNodes", 8, {
        const size_t nodes = NodesOf(row).size();
        return absl::StrCat(nodes == 0 && row.kind == Kind::kJob
                                ? RequestedNodes(job)
                                : nodes);
      }),
      FIELD("NodeList", -15, {
        const std::vector<std::string> nodes = NodesOf(row);
        return nodes.empty() ? std::string("None assigned")
                             : CompressHostlist(nodes);
      }),
      FIELD("NTasks", 8, if (row.kind == Kind::kJob) return "";
            if (row.kind == Kind::kBatch) return "1"; uint32_t tasks = 0;
            for (const v1::NodeAllocation& a : row.step->nodes()) {
              tasks += a.rank_count();
            } return absl::StrCat(tasks);),
      FIELD("Partition", 10,
            return row.kind == Kind::kJob ? job.spec().partition() : "";),
      FIELD("Priority", 10,
            return row.kind == Kind::kJob
                       ? absl::StrCat(static_cast<int64_t>(job.priority()))
                       : "";),
      FIELD("QOS", 10, return JobQos(job.spec());),
      FIELD("Reason", 25,
            return row.kind != Kind::kJob ? ""
                   : job.reason().empty() ? "None"
                                          : job.reason();),
      FIELD("ReqCPUS", 8, return absl::StrCat(RequestedCpus(job));),
      FIELD("ReqMem", 10, return SlurmMemory(job.spec().mem_per_node_mb());),
      FIELD("ReqNodes", 8, return absl::StrCat(RequestedNodes(job));),
      FIELD("ReqTRES", -12,
            return row.kind != Kind::kJob
                       ? ""
                       : Tres(RequestedCpus(job),
                              job.spec().gpus_per_node() * RequestedNodes(job),
                              job.spec().mem_per_node_mb() *
                                  RequestedNodes(job),
                              RequestedNodes(job));),
      FIELD("Restarts", 8,
            return absl::StrCat(JobRestartCount(job));),
      FIELD("Start", 19, return SlurmTime(StartMs(row));),
      FIELD("State", 10, switch (row.kind) {
        case Kind::kBatch:
          return BatchState(job);
        case Kind::kStep:
          return StepState(*row.step);
        default:
          return SacctJobState(job);
      }),
      FIELD("Submit", 19,
            return SlurmTime(row.kind == Kind::kStep ? row.step->start_time_ms()
                                                     : job.submit_time_ms());),
      FIELD("Timelimit", 10,
            return row.kind == Kind::kJob ? Timelimit(job) : "";),
      FIELD("TimelimitRaw", 12,
            return row.kind != Kind::kJob ? ""
                   : job.spec().time_limit_seconds() == 0
                       ? "UNLIMITED"
                       : absl::StrCat(job.spec().time_limit_seconds() / 60);),
      FIELD("UID", 10, return absl::StrCat(job.uid());),
      FIELD("User", 9, return row.kind == Kind::kJob ? job.user() : "";),
      FIELD("WorkDir", -20, return job.spec().working_dir();),
  };
  return kFields;
}

#undef FIELD

}  // namespace

std::string SlurmDuration(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  const int64_t days = seconds / 86400;
  const std::string clock = absl::StrFormat(
      "%02d:%02d:%02d", seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
  return days > 0 ? absl::StrCat(days, "-", clock) : clock;
}

std::string SlurmTime(int64_t ms) {
  if (ms <= 0) return "Unknown";
  const time_t seconds = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return text;
}

std::string SlurmMemory(uint64_t mb) {
  if (mb == 0) return "0";
  if (mb % (1024 * 1024) == 0) return absl::StrCat(mb / (1024 * 1024), "T");
  if (mb % 1024 == 0) return absl::StrCat(mb / 1024, "G");
  return absl::StrCat(mb, "M");
}

std::string SacctJobState(const v1::JobRecord& job) {
  if (job.state() == v1::CANCELLED && job.has_cancelled_by_uid()) {
    return absl::StrCat("CANCELLED by ", job.cancelled_by_uid());
  }
  return StateName(job.state());
}

const std::vector<SacctField>& SacctFields() { return Table(); }

const SacctField* FindSacctField(std::string_view name) {
  for (const SacctField& field : Table()) {
    if (EqualsIgnoreCase(field.name, name)) return &field;
  }
  return nullptr;
}

std::vector<SacctRow> SacctRowsOf(const v1::JobRecord& job,
                                  bool allocations_only,
                                  std::string_view step) {
  std::vector<SacctRow> rows;
  if (step.empty()) rows.push_back({&job, Kind::kJob, nullptr});
  if (allocations_only) return rows;
  if (Started(job) && job.spec().script_once() &&
      (step.empty() || step == "batch")) {
    rows.push_back({&job, Kind::kBatch, nullptr});
  }
  std::vector<const v1::StepRecord*> steps;
  for (const v1::StepRecord& s : job.steps()) steps.push_back(&s);
  std::sort(steps.begin(), steps.end(),
            [](const v1::StepRecord* a, const v1::StepRecord* b) {
              return a->id() < b->id();
            });
  for (const v1::StepRecord* s : steps) {
    if (s->id() == 0) continue;
    if (!step.empty() && step != absl::StrCat(s->id() - 1)) continue;
    rows.push_back({&job, Kind::kStep, s});
  }
  return rows;
}

}  // namespace gantry::cli
