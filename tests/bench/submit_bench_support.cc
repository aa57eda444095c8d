#include "tests/bench/submit_bench_support.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cli/commands/batch_command.h"
#include "common/job_options.h"

extern char** environ;

namespace gantry::bench {

double UnixSeconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

absl::StatusOr<v1::SubmitRequest> BatchRequest(
    const std::vector<std::string>& words) {
  absl::StatusOr<cli::BatchInvocation> invocation =
      cli::SplitBatchArguments(words);
  if (!invocation.ok()) return invocation.status();
  if (invocation->script_path.empty()) {
    return absl::InvalidArgumentError("no batch script given after --");
  }
  std::ifstream in(invocation->script_path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", invocation->script_path));
  }
  std::stringstream text;
  text << in.rdbuf();
  JobRequest request;
  absl::Status status = ApplyScriptDirectives(text.str(), request);
  if (status.ok()) {
    status = ApplyJobOptions(invocation->option_words, "command line", request);
  }
  if (!status.ok()) return status;
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) {
    return absl::InternalError("cannot read the current directory");
  }
  return cli::BuildSubmitRequest(request, text.str(), invocation->script_args,
                                 cwd, environ);
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           bool own_connection,
                                           int reconnect_ms) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  if (own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // Not GRPC_ARG_MIN_RECONNECT_BACKOFF_MS: gRPC also takes it as the
  // connect timeout, and a handshake with a loaded controller can take
  // longer than a few milliseconds.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, reconnect_ms);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, reconnect_ms * 4);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                   args);
}

std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

double Percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(fraction * sorted.size() + 0.9999);
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace gantry::bench
