// squeue's -o/--format: a format string such as "%.18i %.9P %.8j %R" parsed
// once, then rendered as a header line and one line per job.
//
// Each field is %[.|-][WIDTH]LETTER. With a width the value is padded to it
// and cut at it (as squeue does); "." aligns right, otherwise left. Other
// text is copied as written; "%%" is a percent sign. Letters:
//   %i %A job id     %j name          %u user        %P partition
//   %T state         %t state (short) %M time used   %l time limit
//   %L time left     %D nodes         %C CPUs        %b GPUs per node (TRES)
//   %R nodelist, or (reason) while pending           %N nodelist
//   %V submit time   %S start time    %e end time    %r reason
//   %a account       %Q priority
//
// Pure; a parsed SqueueFormat is immutable and safe to share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/types.pb.h"

namespace gantry::cli {

// squeue's default layout: JOBID PARTITION NAME USER ST TIME NODES
// NODELIST(REASON).
inline constexpr char kSqueueDefaultFormat[] =
    "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";

class SqueueFormat {
 public:
  // INVALID_ARGUMENT names an unknown letter or a "%" with none, and lists
  // the letters known.
  static absl::StatusOr<SqueueFormat> Parse(std::string_view format);

  std::string Header() const;
  // `now_ms`: for the time used and left of running jobs.
  std::string Row(const v1::JobRecord& job, int64_t now_ms) const;

 private:
  struct Item {
    std::string literal;  // copied as is when letter is 0
    char letter = 0;
    int width = 0;  // 0: as long as the value
    bool right = false;
  };

  std::string Render(const std::vector<std::string>& values) const;

  std::vector<Item> items_;
};

}  // namespace gantry::cli
