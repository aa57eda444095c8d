// libFuzzer target for sacct's user input: the -o/--format list and the
// -S/-E times (also sreport's start=/end=). The input's first line is a
// format list, the rest a time.
//
// Beyond "no crash": a format that parses renders a header of its fields
// and rows of a job in every layout; errors are INVALID_ARGUMENT with a
// message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli/slurm/sacct_format.h"
#include "cli/slurm/sacct_time.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckError(const absl::Status& status) {
  Check(status.code() == absl::StatusCode::kInvalidArgument);
  Check(!status.message().empty());
}

gantry::v1::JobRecord SampleJob() {
  gantry::v1::JobRecord job;
  job.set_id(7);
  job.set_state(gantry::v1::COMPLETED);
  job.set_submit_time_ms(1'700'000'000'000);
  job.set_start_time_ms(1'700'000'001'000);
  job.set_end_time_ms(1'700'000'061'000);
  job.mutable_spec()->set_script_once(true);
  gantry::v1::NodeAllocation& a = *job.add_allocation();
  a.set_node("node01");
  a.set_cpus(2);
  gantry::v1::StepRecord& step = *job.add_steps();
  step.set_id(1);
  step.add_argv("/bin/true");
  return job;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string_view format_text = input.substr(0, newline);
  const std::string_view time_text =
      newline == std::string_view::npos ? input : input.substr(newline + 1);

  const absl::StatusOr<gantry::cli::SacctFormat> format =
      gantry::cli::SacctFormat::Parse(format_text);
  if (!format.ok()) {
    CheckError(format.status());
  } else {
    static const gantry::v1::JobRecord job = SampleJob();
    gantry::cli::SacctContext context;
    context.now_ms = 1'700'000'100'000;
    for (gantry::cli::SacctParsable parsable :
         {gantry::cli::SacctParsable::kNo,
          gantry::cli::SacctParsable::kTrailing,
          gantry::cli::SacctParsable::kNoEnding}) {
      const std::string header = format->Header(parsable, "|");
      Check(!header.empty() && header.back() == '\n');
      for (const gantry::cli::SacctRow& row :
           gantry::cli::SacctRowsOf(job, false)) {
        const std::string line = format->Row(row, context, parsable, "|");
        Check(!line.empty() && line.back() == '\n');
      }
    }
  }
  const absl::StatusOr<int64_t> when =
      gantry::cli::ParseSacctTime(time_text, 1'700'000'000);
  if (!when.ok()) CheckError(when.status());
  return 0;
}
