#include "cli/slurm/sinfo_format.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/slurm/long_fields.h"
#include "cli/slurm/sinfo_fields.h"
#include "common/hostlist.h"

namespace gantry::cli {
namespace {

// Whether a field is summed or listed over a row's nodes instead of being
// part of what groups them.
bool IsAggregate(char letter) {
  return std::string_view("DNnoCeAF").find(letter) != std::string_view::npos;
}

// A row: its partition, grouping values and nodes.
struct SinfoRow {
  const v1::PartitionInfo* partition = nullptr;
  std::vector<std::string> key;
  std::vector<const v1::NodeRecord*> nodes;
};

bool Usable(const v1::NodeRecord& node) {
  return node.state() == v1::NODE_UP && !node.drained() &&
         node.health_problems_size() == 0;
}

std::string AggregateValue(char letter, const SinfoRow& row) {
  std::vector<std::string> names;
  uint64_t allocated = 0, idle = 0, other = 0, free_mb = 0;
  uint32_t nodes_allocated = 0, nodes_idle = 0, nodes_other = 0;
  for (const v1::NodeRecord* node : row.nodes) {
    names.push_back(letter == 'o' ? node->address() : node->name());
    const uint32_t total = node->inventory().cpus();
    const uint32_t used = std::min(node->cpus_allocated(), total);
    const bool usable = Usable(*node);
    allocated += used;
    (usable ? idle : other) += total - used;
    free_mb += node->inventory().memory_mb() > node->mem_allocated_mb()
                   ? node->inventory().memory_mb() - node->mem_allocated_mb()
                   : 0;
    const std::string state = SinfoBaseState(SinfoNodeState(*node));
    if (!usable) {
      ++nodes_other;
    } else if (state == "mix" || state == "alloc") {
      ++nodes_allocated;
    } else {
      ++nodes_idle;
    }
  }
  switch (letter) {
    case 'D':
      return absl::StrCat(row.nodes.size());
    case 'N':
      return CompressHostlist(names);
    case 'n':
    case 'o':
      return absl::StrJoin(names, ",");
    case 'C':
      return absl::StrCat(allocated, "/", idle, "/", other, "/",
                          allocated + idle + other);
    case 'A':
      return absl::StrCat(nodes_allocated, "/", nodes_idle);
    case 'F':
      return absl::StrCat(nodes_allocated, "/", nodes_idle, "/", nodes_other,
                          "/", row.nodes.size());
    case 'e':
      return absl::StrCat(free_mb);
  }
  return "";
}

// sinfo's "-t" order, busiest first: Slurm's node state codes (mixed 5,
// allocated 3, idle 2, down 1, unknown 0), drained ones by what they run.
int StateRank(const v1::NodeRecord& node) {
  const std::string state = SinfoBaseState(SinfoNodeState(node));
  if (state == "mix") return 5;
  if (state == "alloc" || state == "drng") return 3;
  if (state == "down") return 1;
  if (state == "unk") return 0;
  return 2;
}

}  // namespace

bool SinfoFilter::Matches(const v1::NodeRecord& node,
                          const std::string& partition) const {
  if (!partitions.empty() && !partitions.count(partition)) return false;
  if (!nodes.empty() && !nodes.count(node.name())) return false;
  const std::string full = SinfoNodeState(node);
  const bool dead = !full.empty() && full.back() == '*';
  if ((responding_only && dead) || (dead_only && !dead)) return false;
  const std::string state = SinfoBaseState(full);
  if (with_reason && state != "down" && state != "drain" && state != "drng") {
    return false;
  }
  // "drain" as a filter stands for drained and draining, as in sinfo -t.
  return states.empty() || states.count(state) ||
         (state == "drng" && states.count("drain"));
}

absl::StatusOr<SinfoFormat> SinfoFormat::Parse(std::string_view format,
                                               std::vector<char>* unknown) {
  absl::StatusOr<PercentFormat> parsed = PercentFormat::Parse(
      PercentFormat::ExpandAll(format, kSinfoLetters), kSinfoLetters, unknown);
  if (!parsed.ok()) return parsed.status();
  SinfoFormat sinfo;
  sinfo.format_ = *std::move(parsed);
  sinfo.format_.KeepTrailingBlanks();
  return sinfo;
}

absl::StatusOr<SinfoFormat> SinfoFormat::ParseFields(std::string_view fields) {
  absl::StatusOr<std::vector<LongField>> parsed =
      ParseLongFields(fields, &SinfoFieldLetter, SinfoFieldNames());
  if (!parsed.ok()) return parsed.status();
  SinfoFormat sinfo;
  for (const LongField& field : *parsed) {
    sinfo.format_.AddField(field.letter, field.width, field.right,
                           field.suffix);
  }
  sinfo.format_.KeepTrailingBlanks();
  return sinfo;
}

std::string SinfoFormat::Header() const { return format_.Header(&SinfoHeader); }

std::vector<std::vector<std::string>> SinfoFormat::Values(
    const std::vector<v1::NodeRecord>& nodes,
    const std::vector<v1::PartitionInfo>& partitions, const SinfoFilter& filter,
    bool per_node, bool sorted) const {
  const std::vector<char> fields = format_.Fields();
  std::vector<SinfoRow> rows;
  for (const v1::PartitionInfo& partition : partitions) {
    if (!filter.partitions.empty() &&
        !filter.partitions.count(partition.name())) {
      continue;
    }
    const std::size_t first = rows.size();
    for (const v1::NodeRecord& node : nodes) {
      if (std::find(node.partitions().begin(), node.partitions().end(),
                    partition.name()) == node.partitions().end() ||
          !filter.Matches(node, partition.name())) {
        continue;
      }
      std::vector<std::string> key;
      for (char letter : fields) {
        if (!IsAggregate(letter)) {
          key.push_back(SinfoNodeValue(letter, node, partition));
        }
      }
      auto it = per_node ? rows.end()
                         : std::find_if(rows.begin() + static_cast<long>(first),
                                        rows.end(), [&](const SinfoRow& row) {
                                          return row.key == key;
                                        });
      if (it == rows.end()) {
        rows.push_back({&partition, std::move(key), {}});
        it = rows.end() - 1;
      }
      it->nodes.push_back(&node);
    }
    if (sorted && !per_node) {
      std::stable_sort(rows.begin() + static_cast<long>(first), rows.end(),
                       [](const SinfoRow& a, const SinfoRow& b) {
                         return StateRank(*a.nodes.front()) >
                                StateRank(*b.nodes.front());
                       });
    }
    if (sorted && rows.size() == first && filter.states.empty() &&
        filter.nodes.empty() && !filter.with_reason) {
      rows.push_back({&partition, {}, {}});  // sinfo's "n/a" row
    }
  }
  if (sorted && per_node) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const SinfoRow& a, const SinfoRow& b) {
                       return a.nodes.front()->name() < b.nodes.front()->name();
                     });
  }
  std::vector<std::vector<std::string>> values;
  for (const SinfoRow& row : rows) {
    std::vector<std::string> line;
    std::size_t next_key = 0;
    for (char letter : fields) {
      if (row.nodes.empty()) {
        // A partition without nodes: its own fields, n/a for the nodes'.
        if (letter == 'D') {
          line.push_back("0");
        } else if (IsAggregate(letter)) {
          line.push_back(
              letter == 'N' || letter == 'n' || letter == 'o' ? "" : "0/0/0/0");
        } else {
          static const v1::NodeRecord kNone;
          const std::string value =
              SinfoNodeValue(letter, kNone, *row.partition);
          line.push_back(letter == 't' || letter == 'T' ? "n/a" : value);
        }
        continue;
      }
      line.push_back(IsAggregate(letter) ? AggregateValue(letter, row)
                                         : row.key[next_key++]);
    }
    values.push_back(std::move(line));
  }
  return values;
}

std::vector<std::string> SinfoFormat::Rows(
    const std::vector<v1::NodeRecord>& nodes,
    const std::vector<v1::PartitionInfo>& partitions, const SinfoFilter& filter,
    bool per_node) const {
  std::vector<std::string> lines;
  for (const std::vector<std::string>& values :
       Values(nodes, partitions, filter, per_node, false)) {
    lines.push_back(format_.Render(values));
  }
  return lines;
}

std::string SinfoFormat::Table(const std::vector<v1::NodeRecord>& nodes,
                               const std::vector<v1::PartitionInfo>& partitions,
                               const SinfoFilter& filter, bool per_node,
                               bool no_header) const {
  const std::vector<std::vector<std::string>> values =
      Values(nodes, partitions, filter, per_node, true);
  PercentFormat fitted = format_;
  // Slurm's MIN_PART_FIELD_SIZE and MIN_NODE_FIELD_SIZE.
  fitted.FitWidths(values, 9);
  std::string table = no_header ? "" : fitted.Header(&SinfoHeader);
  for (const std::vector<std::string>& row : values) {
    table += fitted.Render(row);
  }
  return table;
}

}  // namespace gantry::cli