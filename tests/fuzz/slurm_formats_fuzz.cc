// libFuzzer target for the query commands' parsers of user input: squeue
// -o/-O/-S, sinfo -o/-O, scontrol update assignments, and the in-order
// hostlist compression of scontrol show hostlist. The first byte picks the
// parser; the rest is its input.
//
// Beyond "no crash": a refused input is INVALID_ARGUMENT with a message;
// an accepted layout renders a header and rows ending in a newline; an
// accepted update names jobs or nodes; a compressed hostlist expands back
// to the names given.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/slurm/scontrol_update.h"
#include "cli/slurm/sinfo_format.h"
#include "cli/slurm/squeue_format.h"
#include "cli/slurm/squeue_sort.h"
#include "common/hostlist.h"

namespace {

namespace v1 = gantry::v1;

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckRefusal(const absl::Status& status) {
  Check(status.code() == absl::StatusCode::kInvalidArgument);
  Check(!status.message().empty());
}

// A rendered line: ends in its newline (the layout's own text may hold
// more).
bool OneLine(const std::string& line) {
  return !line.empty() && line.back() == '\n';
}

v1::JobRecord SampleJob() {
  v1::JobRecord job;
  job.set_id(7);
  job.set_state(v1::RUNNING);
  job.set_start_time_ms(1000);
  job.mutable_spec()->set_name("name\nwith newline");
  job.add_allocation()->set_node("n1");
  job.add_steps()->set_id(1);
  return job;
}

void SqueueLayout(const absl::StatusOr<gantry::cli::SqueueFormat>& format) {
  if (!format.ok()) return CheckRefusal(format.status());
  const v1::JobRecord job = SampleJob();
  Check(OneLine(format->Header()));
  Check(OneLine(format->Row(job, 5000)));
  Check(OneLine(format->StepRow(job, job.steps(0), 5000)));
}

void SinfoLayout(const absl::StatusOr<gantry::cli::SinfoFormat>& format) {
  if (!format.ok()) return CheckRefusal(format.status());
  v1::NodeRecord node;
  node.set_name("n1");
  node.set_state(v1::NODE_UP);
  v1::PartitionInfo partition;
  partition.set_name("p");
  *node.add_partitions() = partition.name();
  const std::string table = format->Table(
      {node}, {partition}, gantry::cli::SinfoFilter(), false, false);
  Check(table.size() >= 2 && table.back() == '\n');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view view(reinterpret_cast<const char*>(data), size);
  const std::string input(view.substr(1));
  switch (data[0] % 7) {
    case 0: {
      std::vector<char> unknown;
      SqueueLayout(gantry::cli::SqueueFormat::Parse(input, &unknown));
      break;
    }
    case 1:
      SqueueLayout(gantry::cli::SqueueFormat::ParseFields(input));
      break;
    case 2: {
      std::vector<char> unknown;
      SinfoLayout(gantry::cli::SinfoFormat::Parse(input, &unknown));
      SinfoLayout(gantry::cli::SinfoFormat::ParseFields(input));
      break;
    }
    case 3: {
      const absl::StatusOr<gantry::cli::SqueueSort> sort =
          gantry::cli::SqueueSort::Parse(input);
      if (!sort.ok()) {
        CheckRefusal(sort.status());
        break;
      }
      const v1::JobRecord a = SampleJob();
      v1::JobRecord b = SampleJob();
      b.set_id(8);
      // A strict weak order: not both before the other.
      Check(!(sort->Compare(a, b, 0) < 0 && sort->Compare(b, a, 0) < 0));
      Check(sort->Compare(a, a, 0) == 0);
      break;
    }
    case 4: {
      const std::vector<std::string> words =
          absl::StrSplit(input, ' ', absl::SkipEmpty());
      const absl::StatusOr<gantry::cli::ScontrolUpdate> update =
          gantry::cli::ParseScontrolUpdate(words);
      if (!update.ok()) {
        CheckRefusal(update.status());
        break;
      }
      Check(update->entity == gantry::cli::ScontrolUpdate::Entity::kJob
                ? !update->job_ids.empty()
                : !update->nodes.empty());
      break;
    }
    default: {
      const absl::StatusOr<std::vector<std::string>> hosts =
          gantry::ExpandHostlist(input, 10'000);
      if (!hosts.ok()) break;
      // scontrol show hostlist's compression reads back as the same names
      // in the same order ("[9-10]" included: bare brackets expand).
      const std::string ranged = gantry::CompressHostlistInOrder(*hosts);
      const absl::StatusOr<std::vector<std::string>> again =
          gantry::ExpandHostlist(ranged, 10'000);
      Check(again.ok() && *again == *hosts);
      break;
    }
  }
  return 0;
}
