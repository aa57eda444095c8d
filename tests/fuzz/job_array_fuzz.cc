// libFuzzer target for the --array parser, which reads user input on the
// client and again, from the request, in the controller.
//
// Beyond "no crash": an accepted spec is within the documented limits,
// sorted and duplicate-free, and its canonical text reads back to the same
// spec; errors carry a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/job_array.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<gantry::JobArraySpec> spec =
      gantry::ParseJobArray(input);
  if (!spec.ok()) {
    Check(spec.status().code() == absl::StatusCode::kInvalidArgument);
    Check(!spec.status().message().empty());
    return 0;
  }
  Check(!spec->task_ids.empty());
  Check(spec->task_ids.size() <= gantry::kMaxArrayTasks);
  Check(spec->max_task_id() <= gantry::kMaxArrayTaskId);
  Check(spec->max_running <= gantry::kMaxArrayTasks);
  for (std::size_t i = 1; i < spec->task_ids.size(); ++i) {
    Check(spec->task_ids[i - 1] < spec->task_ids[i]);
  }
  Check(spec->step() >= 1);
  const std::string canonical = gantry::FormatJobArray(*spec);
  const absl::StatusOr<gantry::JobArraySpec> again =
      gantry::ParseJobArray(canonical);
  Check(again.ok() && *again == *spec);
  return 0;
}
