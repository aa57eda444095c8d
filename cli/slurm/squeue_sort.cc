#include "cli/slurm/squeue_sort.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/slurm/squeue_fields.h"
#include "cli/slurm/squeue_format.h"
#include "common/text.h"

namespace gantry::cli {
namespace {

// A key's value when it is a number (ids, counts, times): -1 for a text key.
double NumericValue(char letter, const v1::JobRecord& job, int64_t now_ms) {
  const v1::JobSpec& spec = job.spec();
  const auto elapsed_ms = [&] {
    if (job.start_time_ms() <= 0) return int64_t{0};
    return (job.end_time_ms() ? job.end_time_ms() : now_ms) -
           job.start_time_ms();
  };
  switch (letter) {
    case 'i':
    case 'F':
      // Array tasks sort by their array's id, then their index.
      return static_cast<double>(job.array_job_id() ? job.array_job_id()
                                                    : job.id()) *
                 1e7 +
             job.array_task_id();
    case 'A':
      return static_cast<double>(job.id());
    case 'K':
      return job.array_task_id();
    case 'D':
      return job.allocation_size() > 0 ? job.allocation_size()
             : spec.min_nodes() > 0    ? spec.min_nodes()
                                       : spec.nodes();
    case 'Q':
    case 'p':
      return job.state() == v1::PENDING ? job.priority() : 0;
    case 'U':
      return job.uid();
    case 'G':
      return job.gid();
    case 'c':
      return spec.cpus_per_task();
    case 'm':
      return static_cast<double>(spec.mem_per_node_mb());
    case 't':
    case 'T':
      return static_cast<double>(job.state());
    case 'M':
      return static_cast<double>(elapsed_ms());
    case 'l':
      return static_cast<double>(spec.time_limit_seconds());
    case 'L':
      return spec.time_limit_seconds() == 0
                 ? 1e18
                 : static_cast<double>(spec.time_limit_seconds()) * 1000 -
                       static_cast<double>(elapsed_ms());
    case 'V':
      return static_cast<double>(job.submit_time_ms());
    case 'S':
      return static_cast<double>(job.state() == v1::PENDING
                                     ? job.expected_start_time_ms()
                                     : job.start_time_ms());
    case 'e':
      return static_cast<double>(job.end_time_ms());
  }
  return -1;
}

bool IsNumeric(char letter) {
  return std::string_view("iFAKDQpUGcmtTMlLVSe").find(letter) !=
         std::string_view::npos;
}

// One job's value under one sort key: a number, or a text key's text.
struct KeyValue {
  double number = 0;
  std::string text;
};

KeyValue KeyValueOf(char letter, bool numeric, const v1::JobRecord& job,
                    int64_t now_ms) {
  if (numeric) return {.number = NumericValue(letter, job, now_ms), .text = {}};
  return {.number = 0, .text = SqueueValue(letter, job, now_ms)};
}

// -1, 0 or 1 as `a` sorts before, with or after `b` under one key.
int CompareKeyValues(bool numeric, bool descending, const KeyValue& a,
                     const KeyValue& b) {
  int sign = numeric ? (a.number < b.number   ? -1
                        : a.number > b.number ? 1
                                              : 0)
                     : a.text.compare(b.text);
  sign = sign < 0 ? -1 : sign > 0 ? 1 : 0;
  return descending ? -sign : sign;
}

}  // namespace

absl::StatusOr<SqueueSort> SqueueSort::Parse(std::string_view keys) {
  SqueueSort sort;
  for (absl::string_view item : absl::StrSplit(AsAbsl(keys), ',')) {
    Key key;
    if (!item.empty() && (item[0] == '+' || item[0] == '-')) {
      key.descending = item[0] == '-';
      item.remove_prefix(1);
    }
    if (item.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "empty sort key in \"", AsAbsl(keys), "\": e.g. -S P,t,-p"));
    }
    if (item.size() == 1 && std::string_view(kSqueueLetters).find(item[0]) !=
                                std::string_view::npos) {
      key.letter = item[0];
    } else {
      key.letter =
          SqueueFieldLetter(std::string_view(item.data(), item.size()));
    }
    if (key.letter == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid sort key \"", item, "\" in \"", AsAbsl(keys),
                       "\": use the -o letters (i, P, t, p, u, j, S, ...) or "
                       "-O names, each optionally after + or -"));
    }
    sort.keys_.push_back(key);
  }
  return sort;
}

int SqueueSort::Compare(const v1::JobRecord& a, const v1::JobRecord& b,
                        int64_t now_ms) const {
  for (const Key& key : keys_) {
    const bool numeric = IsNumeric(key.letter);
    const int order = CompareKeyValues(
        numeric, key.descending, KeyValueOf(key.letter, numeric, a, now_ms),
        KeyValueOf(key.letter, numeric, b, now_ms));
    if (order != 0) return order;
  }
  return 0;
}

void SqueueSort::Apply(std::vector<const v1::JobRecord*>& jobs,
                       int64_t now_ms) const {
  // Each key's value is computed once per job, not once per comparison: a
  // text key formats its value, and 50,000 jobs take 1.6 million
  // comparisons (a fifth of `gantry queue`'s time).
  struct Column {
    bool numeric;
    bool descending;
    std::vector<KeyValue> values;
  };
  std::vector<Column> columns;
  columns.reserve(keys_.size());
  for (const Key& key : keys_) {
    Column& column =
        columns.emplace_back(Column{IsNumeric(key.letter), key.descending, {}});
    column.values.reserve(jobs.size());
    for (const v1::JobRecord* job : jobs) {
      column.values.push_back(
          KeyValueOf(key.letter, column.numeric, *job, now_ms));
    }
  }
  std::vector<size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    for (const Column& column : columns) {
      const int sign = CompareKeyValues(column.numeric, column.descending,
                                        column.values[a], column.values[b]);
      if (sign != 0) return sign < 0;
    }
    return false;
  });
  std::vector<const v1::JobRecord*> sorted;
  sorted.reserve(jobs.size());
  for (size_t index : order) sorted.push_back(jobs[index]);
  jobs = std::move(sorted);
}

}  // namespace gantry::cli
