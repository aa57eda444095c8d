// sacct's -o/--format list ("JobID%20,State,jobname%-30") parsed once, and
// the lines sacct prints with it: fixed-width columns (a positive width
// right-aligns, a negative one left-aligns, a longer value is cut with a
// "+" in its last column) with a "---" underline, or -p/-P's delimited
// fields (-p ends each line with the delimiter too), byte for byte as
// Slurm's print_fields.
//
// Pure; a parsed SacctFormat is immutable and safe to share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/slurm/sacct_fields.h"

namespace gantry::cli {

// sacct's default fields.
inline constexpr char kSacctDefaultFormat[] =
    "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
// -b/--brief and -l/--long.
inline constexpr char kSacctBriefFormat[] = "JobID,State,ExitCode";
inline constexpr char kSacctLongFormat[] =
    "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,"
    "AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,"
    "MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,"
    "AllocCPUS,Elapsed,State,ExitCode,AveCPUFreq,ReqCPUFreqMin,"
    "ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,MaxDiskRead,"
    "MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,"
    "MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,ReqTRES,AllocTRES,"
    "TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,"
    "TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,"
    "TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,"
    "TRESUsageOutAve,TRESUsageOutTot";

enum class SacctParsable {
  kNo,        // fixed-width columns
  kTrailing,  // -p: every field followed by the delimiter
  kNoEnding,  // -P: the delimiter between fields only
};

class SacctFormat {
 public:
  // Items separated by commas (or spaces), each FIELD or FIELD%WIDTH.
  // INVALID_ARGUMENT names an unknown field (and the closest known one) or
  // a bad width. `skip_unknown`: fields Slurm has and Gantry cannot fill
  // (-l's usage statistics) are left out instead.
  static absl::StatusOr<SacctFormat> Parse(std::string_view list,
                                           bool skip_unknown = false);

  // The header and, for fixed width, the underline (each with "\n").
  std::string Header(SacctParsable parsable, std::string_view delimiter) const;
  std::string Row(const SacctRow& row, const SacctContext& context,
                  SacctParsable parsable, std::string_view delimiter) const;

  // The field names in order.
  std::vector<std::string> Names() const;

 private:
  struct Column {
    const SacctField* field;
    int width;  // as SacctField::width
  };
  std::string Line(const std::vector<std::string>& values,
                   SacctParsable parsable, std::string_view delimiter,
                   bool header) const;

  std::vector<Column> columns_;
};

// One line of print_fields (sacct, sreport, sshare): `values` in columns
// of `widths` (positive: right-aligned, negative: left-aligned, a longer
// value cut, with "+" in its last column unless `header`), or delimited as
// `parsable` says; with "\n".
std::string PrintFieldsLine(const std::vector<std::string>& values,
                            const std::vector<int>& widths,
                            SacctParsable parsable, std::string_view delimiter,
                            bool header = false);
// The "---" underline of fixed-width columns, with "\n".
std::string PrintFieldsUnderline(const std::vector<int>& widths);
// The header line of `names`, and the underline for fixed width.
std::string PrintFieldsHeader(const std::vector<std::string>& names,
                              const std::vector<int>& widths,
                              SacctParsable parsable);
// -P (parsable2) wins over -p (parsable); neither: fixed width.
SacctParsable ParsableFrom(bool parsable, bool parsable2);

// sacct -e: the field names, as Slurm lists them (several per line).
std::string SacctHelpFormat();

}  // namespace gantry::cli
