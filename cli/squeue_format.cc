#include "cli/squeue_format.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "cli/output_format.h"

namespace gantry::cli {
namespace {

constexpr char kLetters[] = "iAFKjuPTtMlLDCbRNVSeraQE";

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
      return spec.gpus_per_node()
                 ? absl::StrCat("gres/gpu:", spec.gpus_per_node())
                 : "N/A";
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
  SqueueFormat parsed;
  std::string literal;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      literal += format[i];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      literal += '%';
      ++i;
      continue;
    }
    Item item;
    size_t at = i + 1;
    if (at < format.size() && (format[at] == '.' || format[at] == '-')) {
      item.right = format[at] == '.';
      ++at;
    }
    while (at < format.size() &&
           std::isdigit(static_cast<unsigned char>(format[at]))) {
      item.width = item.width * 10 + (format[at] - '0');
      if (item.width > 1000) {
        return absl::InvalidArgumentError(absl::StrCat(
            "field width too large in \"", std::string(format), "\""));
      }
      ++at;
    }
    if (at >= format.size() ||
        std::string_view(kLetters).find(format[at]) == std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown format field \"", std::string(format.substr(i, at + 1 - i)),
          "\" in \"", std::string(format),
          "\": known are %i %A %F %K %j %u %P %T %t %M %l %L "
          "%D %C %b %R %N %V %S %e %r %a %Q %E (and %% for %)"));
    }
    item.letter = format[at];
    if (!literal.empty()) {
      parsed.items_.push_back(Item{std::move(literal)});
      literal.clear();
    }
    parsed.items_.push_back(item);
    i = at;
  }
  if (!literal.empty()) parsed.items_.push_back(Item{std::move(literal)});
  return parsed;
}

std::string SqueueFormat::Render(const std::vector<std::string>& values) const {
  std::string line;
  size_t next = 0;
  for (const Item& item : items_) {
    if (item.letter == 0) {
      line += item.literal;
      continue;
    }
    std::string value = values[next++];
    if (item.width > 0) {
      const size_t width = static_cast<size_t>(item.width);
      if (value.size() > width) value.resize(width);
      std::string pad(width - value.size(), ' ');
      value = item.right ? pad + value : value + pad;
    }
    line += value;
  }
  // Left-aligned last columns would leave trailing blanks.
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

std::string SqueueFormat::Header() const {
  std::vector<std::string> values;
  for (const Item& item : items_) {
    if (item.letter != 0) values.push_back(HeaderOf(item.letter));
  }
  return Render(values);
}

std::string SqueueFormat::Row(const v1::JobRecord& job, int64_t now_ms) const {
  std::vector<std::string> values;
  for (const Item& item : items_) {
    if (item.letter != 0) values.push_back(Value(item.letter, job, now_ms));
  }
  return Render(values);
}

}  // namespace gantry::cli
