#include "cli/slurm/scontrol_records.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/slurm/node_gres.h"
#include "cli/slurm/sinfo_format.h"
#include "cli/slurm/slurm_words.h"
#include "cli/views/group_name.h"
#include "cli/views/output_format.h"
#include "common/hostlist.h"
#include "common/job_restarts.h"

namespace gantry::cli {
namespace {

std::string TimeOrUnknown(int64_t ms) {
  return ms > 0 ? FormatTime(ms) : "Unknown";
}

std::string Limit(uint64_t seconds) {
  return seconds ? ScontrolDuration(static_cast<int64_t>(seconds))
                 : "UNLIMITED";
}

uint32_t TaskCount(const v1::JobRecord& job, uint32_t nodes) {
  // An allocated job's tasks are what its attempt got (fewer than asked
  // for when a --nodes=MIN-MAX job runs below MAX).
  uint32_t allocated = 0;
  for (const v1::NodeAllocation& share : job.allocation()) {
    allocated += share.rank_count();
  }
  if (allocated > 0) return allocated;
  const v1::JobSpec& spec = job.spec();
  if (spec.ntasks()) return spec.ntasks();
  if (spec.ntasks_per_node()) return spec.ntasks_per_node() * nodes;
  return nodes;
}

}  // namespace

std::string ScontrolDuration(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  const int64_t days = seconds / 86400, hours = seconds / 3600 % 24,
                minutes = seconds / 60 % 60, secs = seconds % 60;
  if (days > 0) {
    return absl::StrFormat("%d-%02d:%02d:%02d", days, hours, minutes, secs);
  }
  return absl::StrFormat("%02d:%02d:%02d", hours, minutes, secs);
}

std::string ScontrolJobRecord(const v1::JobRecord& job, int64_t now_ms,
                              int details) {
  const v1::JobSpec& spec = job.spec();
  const uint32_t nodes = job.allocation_size() > 0
                             ? static_cast<uint32_t>(job.allocation_size())
                             : std::max<uint32_t>(spec.nodes(), 1);
  const uint32_t tasks = TaskCount(job, nodes);
  // Slurm's NumNodes: a pending job's range (MIN-MAX), else the nodes it
  // holds.
  const std::string num_nodes =
      job.allocation_size() == 0 && spec.min_nodes() > 0 &&
              spec.min_nodes() < spec.nodes()
          ? absl::StrCat(spec.min_nodes(), "-", spec.nodes())
          : absl::StrCat(nodes);
  const uint32_t cpus_per_task =
      spec.cpus_per_task() ? spec.cpus_per_task() : 1;
  uint32_t cpus = 0;
  for (const v1::NodeAllocation& share : job.allocation()) cpus += share.cpus();
  if (cpus == 0) cpus = tasks * cpus_per_task;
  std::string tres = absl::StrCat("cpu=", cpus);
  if (spec.mem_per_node_mb()) {
    absl::StrAppend(&tres, ",mem=", spec.mem_per_node_mb() * nodes, "M");
  }
  absl::StrAppend(&tres, ",node=", nodes, ",billing=", cpus);
  if (spec.gpus_per_node()) {
    absl::StrAppend(&tres, ",gres/gpu=", spec.gpus_per_node() * nodes);
  }
  const bool pending = job.state() == v1::PENDING;
  const bool finished = !pending && job.state() != v1::RUNNING;
  int64_t run_ms = 0;
  if (job.start_time_ms() > 0) {
    run_ms =
        (job.end_time_ms() ? job.end_time_ms() : now_ms) - job.start_time_ms();
  }
  // Expected end of a running job: its start plus its limit.
  int64_t end_ms = job.end_time_ms();
  if (end_ms == 0 && job.start_time_ms() > 0 && spec.time_limit_seconds()) {
    end_ms = job.start_time_ms() +
             static_cast<int64_t>(spec.time_limit_seconds()) * 1000;
  }
  const int64_t start_ms =
      pending ? job.expected_start_time_ms() : job.start_time_ms();
  const std::string node_list = JobNodeList(job);
  const bool requeue = !spec.has_max_restarts() || spec.max_restarts() > 0;
  std::string out = absl::StrCat("JobId=", job.id());
  if (job.array_job_id() != 0) {
    absl::StrAppend(&out, " ArrayJobId=", job.array_job_id(),
                    " ArrayTaskId=", job.array_task_id());
  }
  absl::StrAppend(&out, " JobName=", spec.name(), "\n");
  absl::StrAppend(&out, "   UserId=", job.user(), "(", job.uid(), ")",
                  " GroupId=", GroupName(job.gid()), "(", job.gid(), ")",
                  " MCS_label=N/A\n");
  absl::StrAppend(
      &out, "   Priority=", pending ? static_cast<int64_t>(job.priority()) : 0,
      " Nice=0 Account=", OrNull(spec.account()), " QOS=", JobQos(spec), "\n");
  absl::StrAppend(&out, "   JobState=", StateName(job.state()),
                  " Reason=", job.reason().empty() ? "None" : job.reason(),
                  " Dependency=", OrNull(spec.dependency()), "\n");
  absl::StrAppend(&out, "   Requeue=", requeue ? 1 : 0,
                  " Restarts=", JobRestartCount(job),
                  " BatchFlag=1 Reboot=0 ExitCode=", job.exit_code(), ":",
                  job.exit_signal(), "\n");
  absl::StrAppend(&out, "   RunTime=", ScontrolDuration(run_ms / 1000),
                  " TimeLimit=", Limit(spec.time_limit_seconds()),
                  " TimeMin=N/A\n");
  absl::StrAppend(
      &out, "   SubmitTime=", TimeOrUnknown(job.submit_time_ms()),
      " EligibleTime=",
      TimeOrUnknown(std::max({job.submit_time_ms(), job.eligible_time_ms(),
                              spec.begin_time_ms()})),
      "\n");
  absl::StrAppend(&out, "   AccrueTime=", TimeOrUnknown(job.submit_time_ms()),
                  "\n");
  absl::StrAppend(&out, "   StartTime=", TimeOrUnknown(start_ms),
                  " EndTime=", TimeOrUnknown(end_ms), " Deadline=N/A\n");
  absl::StrAppend(&out, "   SuspendTime=None SecsPreSuspend=0 Scheduler=",
                  finished ? "Main" : "Backfill", "\n");
  absl::StrAppend(&out, "   Partition=", spec.partition(),
                  " AllocNode:Sid=(null):0\n");
  absl::StrAppend(&out, "   ReqNodeList=",
                  OrNull(CompressHostlist({spec.required_nodes().begin(),
                                           spec.required_nodes().end()})),
                  " ExcNodeList=",
                  OrNull(CompressHostlist({spec.excluded_nodes().begin(),
                                           spec.excluded_nodes().end()})),
                  "\n");
  absl::StrAppend(&out, "   NodeList=", OrNull(node_list), "\n");
  absl::StrAppend(
      &out, "   BatchHost=",
      job.allocation_size() > 0 ? job.allocation(0).node() : "(null)", "\n");
  absl::StrAppend(&out, "   NumNodes=", num_nodes, " NumCPUs=", cpus,
                  " NumTasks=", tasks, " CPUs/Task=", cpus_per_task,
                  " ReqB:S:C:T=0:0:*:*\n");
  absl::StrAppend(&out, "   TRES=", tres, "\n");
  absl::StrAppend(&out,
                  "   Socks/Node=* NtasksPerN:B:S:C=", spec.ntasks_per_node(),
                  ":0:*:* CoreSpec=*\n");
  if (details > 0) {
    for (const v1::NodeAllocation& share : job.allocation()) {
      absl::StrAppend(&out, "     Nodes=", share.node(),
                      " CPU_Count=", share.cpus(), " Mem=", share.mem_mb(),
                      " GRES=");
      if (share.gpu_indices_size() > 0) {
        absl::StrAppend(&out, "gpu:", share.gpu_indices_size(),
                        "(IDX:", absl::StrJoin(share.gpu_indices(), ","), ")");
      }
      absl::StrAppend(&out, "\n");
    }
  }
  absl::StrAppend(
      &out, "   MinCPUsNode=", cpus_per_task, " MinMemoryNode=",
      spec.mem_per_node_mb() ? absl::StrCat(spec.mem_per_node_mb(), "M") : "0",
      " MinTmpDiskNode=0\n");
  absl::StrAppend(&out, "   Features=", OrNull(spec.constraint()),
                  " DelayBoot=00:00:00\n");
  absl::StrAppend(&out, "   OverSubscribe=", spec.exclusive() ? "NO" : "OK",
                  " Contiguous=0 Licenses=(null) Network=(null)\n");
  if (spec.gpus_per_node()) {
    absl::StrAppend(&out, "   TresPerNode=gres:gpu:",
                    spec.gpu_type().empty() ? "" : spec.gpu_type() + ":",
                    spec.gpus_per_node(), "\n");
  }
  absl::StrAppend(&out, "   Command=", OrNull(spec.script_path()), "\n");
  absl::StrAppend(&out, "   WorkDir=", spec.working_dir(), "\n");
  absl::StrAppend(
      &out, "   StdErr=",
      job.error_path().empty() ? job.output_path() : job.error_path(), "\n");
  absl::StrAppend(&out, "   StdIn=/dev/null\n");
  absl::StrAppend(&out, "   StdOut=", job.output_path(), "\n");
  absl::StrAppend(&out, "   Power=\n");
  return out;
}

std::string ScontrolPartitionRecord(const v1::PartitionInfo& partition,
                                    const std::vector<v1::NodeRecord>& nodes) {
  std::vector<std::string> names;
  uint64_t cpus = 0;
  for (const v1::NodeRecord& node : nodes) {
    if (std::find(node.partitions().begin(), node.partitions().end(),
                  partition.name()) == node.partitions().end()) {
      continue;
    }
    names.push_back(node.name());
    cpus += node.inventory().cpus();
  }
  const std::string default_time = partition.default_time_seconds()
                                       ? ScontrolDuration(static_cast<int64_t>(
                                             partition.default_time_seconds()))
                                       : "NONE";
  std::string out = absl::StrCat("PartitionName=", partition.name(), "\n");
  absl::StrAppend(&out,
                  "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
                  "   AllocNodes=ALL Default=",
                  partition.is_default() ? "YES" : "NO", " QoS=N/A\n");
  absl::StrAppend(&out, "   DefaultTime=", default_time,
                  " DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 "
                  "Hidden=NO\n");
  absl::StrAppend(
      &out, "   MaxNodes=",
      partition.max_nodes() ? absl::StrCat(partition.max_nodes()) : "UNLIMITED",
      " MaxTime=", Limit(partition.max_time_seconds()),
      " MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n");
  absl::StrAppend(&out, "   Nodes=", OrNull(CompressHostlist(names)), "\n");
  absl::StrAppend(&out,
                  "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO "
                  "ReqResv=NO OverSubscribe=NO\n"
                  "   OverTimeLimit=NONE PreemptMode=OFF\n");
  absl::StrAppend(&out, "   State=UP TotalCPUs=", cpus,
                  " TotalNodes=", names.size(), " SelectTypeParameters=NONE\n");
  absl::StrAppend(&out,
                  "   JobDefaults=(null)\n"
                  "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n");
  return out;
}

std::string ScontrolNodeState(const v1::NodeRecord& node) {
  std::string state = SinfoNodeState(node);
  const bool dead = !state.empty() && state.back() == '*';
  if (dead) state.pop_back();
  static const std::pair<const char*, const char*> kWords[] = {
      {"idle", "IDLE"},        {"mix", "MIXED"},
      {"alloc", "ALLOCATED"},  {"drain", "IDLE+DRAIN"},
      {"drng", "MIXED+DRAIN"}, {"resv", "IDLE+RESERVED"},
      {"down", "DOWN"},        {"unk", "UNKNOWN"}};
  for (const auto& [word, slurm] : kWords) {
    if (state == word) {
      state = slurm;
      break;
    }
  }
  if (node.drained() && state == "DOWN") state += "+DRAIN";
  return dead ? state + "*" : state;
}

std::string ScontrolNodeRecord(const v1::NodeRecord& node) {
  const v1::NodeInventory& inventory = node.inventory();
  const uint32_t sockets = std::max<uint32_t>(inventory.packages(), 1);
  const uint32_t cores = std::max<uint32_t>(inventory.cores(), 1);
  const uint32_t threads = std::max<uint32_t>(inventory.cpus() / cores, 1);
  const std::string features =
      node.features().empty() ? "(null)" : absl::StrJoin(node.features(), ",");
  std::string tres =
      absl::StrCat("cpu=", inventory.cpus(), ",mem=", inventory.memory_mb(),
                   "M,billing=", inventory.cpus());
  if (inventory.gpus_size() > 0) {
    absl::StrAppend(&tres, ",gres/gpu=", inventory.gpus_size());
  }
  std::string alloc_tres;
  if (node.cpus_allocated() > 0) {
    alloc_tres = absl::StrCat("cpu=", node.cpus_allocated());
    if (node.mem_allocated_mb() > 0) {
      absl::StrAppend(&alloc_tres, ",mem=", node.mem_allocated_mb(), "M");
    }
    if (node.gpus_allocated() > 0) {
      absl::StrAppend(&alloc_tres, ",gres/gpu=", node.gpus_allocated());
    }
  }
  std::string out = absl::StrCat("NodeName=", node.name(),
                                 " CoresPerSocket=", cores / sockets, "\n");
  absl::StrAppend(&out, "   CPUAlloc=", node.cpus_allocated(),
                  " CPUEfctv=", inventory.cpus(), " CPUTot=", inventory.cpus(),
                  " CPULoad=N/A\n");
  absl::StrAppend(&out, "   AvailableFeatures=", features, "\n");
  absl::StrAppend(&out, "   ActiveFeatures=", features, "\n");
  absl::StrAppend(&out, "   Gres=", NodeGres(inventory), "\n");
  absl::StrAppend(
      &out, "   NodeAddr=", node.address(), " NodeHostName=", node.name(),
      " Version=", node.agent_version().empty() ? "N/A" : node.agent_version(),
      "\n");
  absl::StrAppend(&out, "   RealMemory=", inventory.memory_mb(),
                  " AllocMem=", node.mem_allocated_mb(),
                  " FreeMem=N/A Sockets=", sockets, " Boards=1\n");
  absl::StrAppend(&out, "   State=", ScontrolNodeState(node),
                  " ThreadsPerCore=", threads,
                  " TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n");
  absl::StrAppend(&out, "   Partitions=", absl::StrJoin(node.partitions(), ","),
                  "\n");
  absl::StrAppend(
      &out, "   BootTime=", TimeOrUnknown(node.registered_time_ms()),
      " SlurmdStartTime=", TimeOrUnknown(node.registered_time_ms()), "\n");
  absl::StrAppend(&out, "   CfgTRES=", tres, "\n");
  absl::StrAppend(&out, "   AllocTRES=", alloc_tres, "\n");
  const std::string reason =
      node.health_problems_size() > 0
          ? absl::StrJoin(node.health_problems(), "; ")
          : (node.drained() ? node.drain_reason() : node.reason());
  const bool unavailable = node.drained() || node.state() == v1::NODE_DOWN ||
                           node.health_problems_size() > 0;
  if (unavailable && !reason.empty()) {
    absl::StrAppend(&out, "   Reason=", reason);
    if (!node.drain_user().empty()) {
      absl::StrAppend(&out, " [", node.drain_user(), "@",
                      TimeOrUnknown(node.drain_time_ms()), "]");
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

std::string OneLine(const std::string& record) {
  std::string line;
  bool blank = false;
  for (char c : record) {
    if (c == '\n' || c == ' ') {
      blank = !line.empty();
      continue;
    }
    if (blank) line += ' ';
    blank = false;
    line += c;
  }
  return line + "\n";
}

}  // namespace gantry::cli
