#include "cli/slurm/squeue_fields.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

// Slurm's names for the fields Gantry can answer, as squeue(1) spells them.
constexpr std::pair<const char*, char> kFields[] = {
    {"Account", 'a'},       {"ArrayJobID", 'F'}, {"ArrayTaskID", 'K'},
    {"BatchHost", 'B'},     {"Command", 'o'},    {"Comment", 'k'},
    {"Contiguous", 'O'},    {"Dependency", 'E'}, {"EndTime", 'e'},
    {"ExcNodes", 'x'},      {"Feature", 'f'},    {"GroupID", 'G'},
    {"GroupName", 'g'},     {"JobArrayID", 'i'}, {"JobID", 'A'},
    {"Licenses", 'W'},      {"MinCpus", 'c'},    {"MinMemory", 'm'},
    {"MinTmpDisk", 'd'},    {"Name", 'j'},       {"Nice", 'y'},
    {"NodeList", 'N'},      {"NumCPUs", 'C'},    {"NumNodes", 'D'},
    {"OverSubscribe", 'h'}, {"Partition", 'P'},  {"Priority", 'p'},
    {"PriorityLong", 'Q'},  {"QOS", 'q'},        {"Reason", 'r'},
    {"ReasonList", 'R'},    {"ReqNodes", 'n'},   {"Reservation", 'v'},
    {"SchedNodes", 'Y'},    {"StartTime", 'S'},  {"State", 'T'},
    {"StateCompact", 't'},  {"SubmitTime", 'V'}, {"TimeLeft", 'L'},
    {"TimeLimit", 'l'},     {"TimeUsed", 'M'},   {"tres-per-node", 'b'},
    {"UserID", 'U'},        {"UserName", 'u'},   {"WCKey", 'w'},
    {"WorkDir", 'Z'},
};

}  // namespace

char SqueueFieldLetter(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(AsAbsl(name));
  for (const auto& [known, letter] : kFields) {
    if (absl::AsciiStrToLower(known) == lower) return letter;
  }
  return 0;
}

const std::vector<std::string>& SqueueFieldNames() {
  static const std::vector<std::string>* names = [] {
    auto* list = new std::vector<std::string>();
    for (const auto& [known, letter] : kFields) list->push_back(known);
    return list;
  }();
  return *names;
}

}  // namespace gantry::cli
