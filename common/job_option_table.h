// The sbatch option table's shape, shared by the table itself
// (job_option_table.cc: every option and the handler that applies it) and
// the reading of option words against it (job_options.cc). Not part of
// the public interface: include common/job_options.h.
//
// Pure, thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "common/job_request.h"

namespace gantry::job_options_internal {

enum class Arg {
  kNone,      // a flag: --parsable
  kRequired,  // --nodes=2, --nodes 2, -N 2, -N2
  kOptional,  // only attached: --exclusive or --exclusive=user
};

struct OptionSpec;

// One use of an option, as handlers see it.
struct OptionUse {
  const OptionSpec& spec;
  std::string_view source;  // "#SBATCH line 3", "command line"
  std::optional<std::string_view> value;
};

using Handler = absl::Status (*)(const OptionUse&, JobRequest&);

struct OptionSpec {
  std::string_view long_name;  // without the leading "--"
  char short_name;             // '\0' when there is none
  Arg arg;
  Handler apply;
};

// Every option, in the table's order.
std::span<const OptionSpec> AllOptions();

// The option of that long name (without "--") or short letter; null when
// there is none.
const OptionSpec* FindLong(std::string_view name);
const OptionSpec* FindShort(char name);

}  // namespace gantry::job_options_internal
