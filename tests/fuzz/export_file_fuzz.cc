// libFuzzer target for the --export-file parser, which reads a file the
// user names at submission.
//
// Beyond "no crash": an accepted file gives variables with valid names
// whose records, written back NUL-separated, parse to the same variables;
// errors are INVALID_ARGUMENT with a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/export_file.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parsed = gantry::ParseExportFile(input);
  if (!parsed.ok()) {
    Check(parsed.status().code() == absl::StatusCode::kInvalidArgument);
    Check(!parsed.status().message().empty());
    return 0;
  }
  std::string written;
  for (const auto& [name, value] : *parsed) {
    Check(!name.empty() && name.find('=') == std::string::npos);
    Check(name.find('\0') == std::string::npos);
    if (value.find('\0') != std::string::npos) std::abort();
    written += name + "=" + value;
    written.push_back('\0');
  }
  if (written.size() <= gantry::kMaxExportFileBytes) {
    const auto again = gantry::ParseExportFile(written);
    Check(again.ok() && *again == *parsed);
  }
  return 0;
}
