#include "common/ignored_options.h"

#include <iterator>

namespace gantry {
namespace {

// Slurm options Gantry accepts without acting on them, each with why
// ignoring it changes nothing that matters here (the warning says so).
struct Explanation {
  std::string_view option;
  std::string_view why;
};
constexpr Explanation kIgnoredBecause[] = {
    {"acctg-freq", "the agent samples usage at its own interval"},
    {"batch", "nodes have no batch-host features"},
    {"cluster-constraint", "there is one cluster"},
    {"clusters", "there is one cluster"},
    {"contiguous", "placement is topology-aware already"},
    {"core-spec", "no cores are reserved for system use"},
    {"cores-per-socket", "placement counts CPUs, not sockets"},
    {"cpu-freq", "CPU frequency is the node's"},
    {"cpus-per-gpu", "a job's CPUs come from --cpus-per-task"},
    {"delay-boot", "nodes are never rebooted for a job"},
    {"distribution",
     "ranks are placed in blocks, node by node (Slurm's default)"},
    {"extra-node-info", "placement counts CPUs, not sockets or cores"},
    {"gpu-bind",
     "each node's GPUs are bound to its ranks by Gantry, nearest HCA first"},
    {"gpu-freq", "GPU clocks are the node's"},
    {"gpus-per-socket", "placement counts GPUs per node"},
    {"gres-flags", "GPUs are bound to the nearest CPUs and HCAs already"},
    {"ignore-pbs", "Gantry reads no #PBS lines"},
    {"input", "a batch script's standard input is /dev/null"},
    {"kill-on-invalid-dep", "a job whose dependency can never be met ends"},
    {"licenses", "there are no licenses to count"},
    {"mcs-label", "there are no MCS labels"},
    {"mem-bind", "memory follows the ranks' CPUs"},
    {"mincpus", "a node's CPUs are counted per task"},
    {"network", "the network is chosen per job by Gantry"},
    {"no-kill", "a job on a failed node is restarted elsewhere"},
    {"ntasks-per-socket", "placement counts CPUs, not sockets"},
    {"oversubscribe", "jobs never share CPUs or GPUs"},
    {"power", "there are no power plugins"},
    {"prefer", "features are only hard constraints (--constraint)"},
    {"priority", "priority comes from age, size and fair share"},
    {"profile", "there is no profiling plugin"},
    {"reboot", "nodes are never rebooted for a job"},
    {"sockets-per-node", "placement counts CPUs, not sockets"},
    {"spread-job", "placement packs a job onto the fewest switches"},
    {"thread-spec", "no threads are reserved for system use"},
    {"threads-per-core", "a node's CPUs are its hardware threads"},
    {"tmp", "local disk space is not scheduled"},
    {"use-min-nodes", "a job gets the node count it asks for"},
    {"verbose", "gantry batch says what it does already"},
    {"wckey", "there are no workload keys"},
};

// Slurm options that would change the job if ignored: refused, saying why.
constexpr Explanation kRefusedBecause[] = {
    {"bb",
     "burst buffers are not supported: nothing would be staged in or out "
     "for the job"},
    {"bbf",
     "burst buffers are not supported: nothing would be staged in or out "
     "for the job"},
    {"container", "containers are not supported"},
    {"gid", "jobs always run with the submitting user's groups"},
    {"nodefile", "not supported; use --nodelist=HOSTLIST"},
};

template <std::size_t N>
std::string_view Find(const Explanation (&table)[N], std::string_view option) {
  for (const Explanation& entry : table) {
    if (entry.option == option) return entry.why;
  }
  return "not supported";
}

}  // namespace

std::string_view WhyIgnored(std::string_view option) {
  return Find(kIgnoredBecause, option);
}

std::string_view WhyRefused(std::string_view option) {
  return Find(kRefusedBecause, option);
}

}  // namespace gantry
