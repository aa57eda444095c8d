#include "cli/slurm/sstat_format.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/slurm/sacct_fields.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

struct Field {
  const char* name;
  int width;
};

const std::vector<Field>& Fields() {
  static const std::vector<Field> kFields = {
      {"JobID", -12},      {"AveCPU", 10},      {"AveRSS", 10},
      {"MaxRSS", 10},      {"MaxRSSNode", -10}, {"MinCPU", 10},
      {"MinCPUNode", -10}, {"NTasks", 8},       {"TotalCPU", 10},
  };
  return kFields;
}

const Field* FindField(std::string_view name) {
  for (const Field& field : Fields()) {
    if (EqualsIgnoreCase(field.name, name)) return &field;
  }
  return nullptr;
}

std::vector<int> Widths(const std::vector<std::string>& fields) {
  std::vector<int> widths;
  widths.reserve(fields.size());
  for (const std::string& name : fields)
    widths.push_back(FindField(name)->width);
  return widths;
}

}  // namespace

std::string SstatKb(uint64_t bytes) { return absl::StrCat(bytes / 1024, "K"); }

absl::StatusOr<std::vector<std::string>> ParseSstatFields(
    std::string_view list) {
  std::vector<std::string> fields;
  for (absl::string_view piece :
       absl::StrSplit(AsAbsl(list), absl::ByAnyChar(", "), absl::SkipEmpty())) {
    const std::string_view name = AsStd(piece);
    const Field* field = FindField(name);
    if (field == nullptr) {
      std::vector<std::string> known;
      for (const Field& f : Fields()) known.push_back(f.name);
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid field \"", AsAbsl(name.substr(0, 60)),
          "\" (Gantry measures: ", absl::StrJoin(known, ", "), ")"));
    }
    fields.push_back(field->name);
  }
  if (fields.empty()) {
    return absl::InvalidArgumentError("no fields given (e.g. -o JobID,MaxRSS)");
  }
  return fields;
}

std::string SstatHeader(const std::vector<std::string>& fields,
                        SacctParsable parsable) {
  return PrintFieldsHeader(fields, Widths(fields), parsable);
}

std::string SstatRow(const v1::JobRecord& job,
                     const std::vector<std::string>& fields,
                     SacctParsable parsable) {
  if (job.live_usage().empty()) return "";
  uint64_t cpu_usec = 0, rss = 0, max_rss = 0, min_cpu = UINT64_MAX;
  uint32_t tasks = 0;
  std::string max_rss_node, min_cpu_node;
  for (const v1::JobUsageSample& sample : job.live_usage()) {
    cpu_usec += sample.cpu_usec();
    rss += sample.rss_bytes();
    tasks += sample.tasks();
    const uint64_t peak = std::max(sample.max_rss_bytes(), sample.rss_bytes());
    if (peak >= max_rss) {
      max_rss = peak;
      max_rss_node = sample.node();
    }
    if (sample.cpu_usec() < min_cpu) {
      min_cpu = sample.cpu_usec();
      min_cpu_node = sample.node();
    }
  }
  const uint32_t per = std::max<uint32_t>(tasks, 1);
  std::vector<std::string> values;
  for (const std::string& name : fields) {
    if (name == "JobID") {
      values.push_back(
          job.array_job_id() != 0
              ? absl::StrCat(job.array_job_id(), "_", job.array_task_id())
              : absl::StrCat(job.id()));
    } else if (name == "AveCPU") {
      values.push_back(
          SlurmDuration(static_cast<int64_t>(cpu_usec / per / 1'000'000)));
    } else if (name == "TotalCPU") {
      values.push_back(
          SlurmDuration(static_cast<int64_t>(cpu_usec / 1'000'000)));
    } else if (name == "AveRSS") {
      values.push_back(SstatKb(rss / per));
    } else if (name == "MaxRSS") {
      values.push_back(SstatKb(max_rss));
    } else if (name == "MaxRSSNode") {
      values.push_back(max_rss_node);
    } else if (name == "MinCPU") {
      values.push_back(
          SlurmDuration(static_cast<int64_t>(min_cpu / 1'000'000)));
    } else if (name == "MinCPUNode") {
      values.push_back(min_cpu_node);
    } else if (name == "NTasks") {
      values.push_back(absl::StrCat(tasks));
    }
  }
  return PrintFieldsLine(values, Widths(fields), parsable, "|");
}

}  // namespace gantry::cli
