#include "cli/slurm/squeue_fields.h"

#include "cli/slurm/long_fields.h"

namespace gantry::cli {
namespace {

// Slurm's names for the fields Gantry can answer, as squeue(1) spells them.
const std::vector<FieldName>& SqueueFields() {
  static const std::vector<FieldName>* fields = new std::vector<FieldName>{
      {"Account", 'a'},       {"ArrayJobID", 'F'},
      {"ArrayTaskID", 'K'},   {"BatchHost", 'B'},
      {"Command", 'o'},       {"Comment", 'k'},
      {"Contiguous", 'O'},    {"Dependency", 'E'},
      {"EndTime", 'e'},       {"ExcNodes", 'x'},
      {"Feature", 'f'},       {"GroupID", 'G'},
      {"GroupName", 'g'},     {"JobArrayID", 'i'},
      {"JobID", 'A'},         {"Licenses", 'W'},
      {"MinCpus", 'c'},       {"MinMemory", 'm'},
      {"MinTmpDisk", 'd'},    {"Name", 'j'},
      {"Nice", 'y'},          {"MaxNodes", kMaxNodesField},
      {"NodeList", 'N'},      {"NumCPUs", 'C'},
      {"NumNodes", 'D'},      {"OverSubscribe", 'h'},
      {"Partition", 'P'},     {"Priority", 'p'},
      {"PriorityLong", 'Q'},  {"QOS", 'q'},
      {"Reason", 'r'},        {"ReasonList", 'R'},
      {"ReqNodes", 'n'},      {"Reservation", 'v'},
      {"SchedNodes", 'Y'},    {"StartTime", 'S'},
      {"State", 'T'},         {"StateCompact", 't'},
      {"SubmitTime", 'V'},    {"TimeLeft", 'L'},
      {"TimeLimit", 'l'},     {"TimeUsed", 'M'},
      {"tres-per-node", 'b'}, {"UserID", 'U'},
      {"UserName", 'u'},      {"WCKey", 'w'},
      {"WorkDir", 'Z'},
  };
  return *fields;
}

}  // namespace

char SqueueFieldLetter(std::string_view name) {
  return LetterOfField(name, SqueueFields());
}

const std::vector<std::string>& SqueueFieldNames() {
  static const std::vector<std::string>* names =
      new std::vector<std::string>(NamesOfFields(SqueueFields()));
  return *names;
}

}  // namespace gantry::cli
