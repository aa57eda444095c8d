// libFuzzer target for gantry-sim's trace reader, which reads whatever CSV
// the user names (Philly, Tiresias, Alibaba 2020/2023, Acme). The input's
// first byte picks the format asked for (byte % 6: auto, philly, tiresias,
// alibaba2020, alibaba2023, acme; the seeds use the digits '0'-'5'), the
// rest is the file.
//
// Beyond "no crash": an accepted trace names a real format and holds jobs
// of 1 to kMaxGpusPerJob GPUs with run times >= 0, numbered 1..n in the
// order of their first rows; every row is counted at most once; errors are
// INVALID_ARGUMENT with a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "daemon/simulator/trace_format.h"
#include "daemon/simulator/trace_reader.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

constexpr gantry::sim::TraceFormat kAsked[] = {
    gantry::sim::TraceFormat::kAuto,
    gantry::sim::TraceFormat::kPhilly,
    gantry::sim::TraceFormat::kTiresias,
    gantry::sim::TraceFormat::kAlibaba2020,
    gantry::sim::TraceFormat::kAlibaba2023,
    gantry::sim::TraceFormat::kAcme};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace gantry::sim;
  if (size == 0) return 0;
  const TraceFormat asked = kAsked[data[0] % 6];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  const auto trace = ParseTrace(text, asked, "fuzz.csv");
  if (!trace.ok()) {
    Check(trace.status().code() == absl::StatusCode::kInvalidArgument);
    Check(!trace.status().message().empty());
    return 0;
  }
  Check(trace->format != TraceFormat::kAuto);
  Check(asked == TraceFormat::kAuto || trace->format == asked);
  Check(trace->skipped_rows >= 0 && trace->cpu_only_rows >= 0 &&
        trace->not_run_rows >= 0 && trace->fractional_gpu_rows >= 0);
  Check((trace->skipped_rows > 0) == !trace->first_skip.empty());
  std::size_t lines = 1;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  Check(trace->jobs.size() + trace->skipped_rows + trace->cpu_only_rows +
            trace->not_run_rows <=
        lines);
  int last_line = 0;
  for (std::size_t i = 0; i < trace->jobs.size(); ++i) {
    const TraceJob& job = trace->jobs[i];
    Check(job.id == gantry::JobId(i + 1));
    Check(job.gpus >= 1 && job.gpus <= trace_format::kMaxGpusPerJob);
    Check(job.duration_ms >= 0);
    Check(job.line > last_line);
    last_line = job.line;
  }
  return 0;
}
