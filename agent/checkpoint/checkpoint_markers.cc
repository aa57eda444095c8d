#include "agent/checkpoint/checkpoint_markers.h"

#include <cctype>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/launch/user_file_access.h"

namespace gantry::agent {
namespace {

// The marker's first line, trimmed, read as `user`; nullopt when the file
// does not exist.
absl::StatusOr<std::optional<std::string>> ReadMarker(
    const std::string& path, const RankIdentity& user,
    std::chrono::milliseconds timeout, int64_t& mtime_ns) {
  absl::StatusOr<std::optional<SmallFile>> file =
      ReadSmallFileAsUser(user, path, kMaxCheckpointMarkerBytes, timeout);
  if (!file.ok()) return file.status();
  if (!file->has_value()) return std::optional<std::string>();
  mtime_ns = (*file)->mtime_ns;
  const std::string& text = (*file)->text;
  const std::string first_line = text.substr(0, text.find('\n'));
  return std::optional<std::string>(
      std::string(absl::StripAsciiWhitespace(first_line)));
}

absl::StatusOr<CheckpointMarker> FromMegatron(const std::string& directory,
                                              const std::string& text) {
  const std::string file = directory + "/latest_checkpointed_iteration.txt";
  if (text == "release")
    return CheckpointMarker{directory + "/release", -1, "megatron"};
  int64_t iteration = 0;
  if (!absl::SimpleAtoi(text, &iteration) || iteration < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": expected an iteration number or \"release\", found \"",
        text.substr(0, 64), "\""));
  }
  char name[32];
  std::snprintf(name, sizeof name, "iter_%07lld",
                static_cast<long long>(iteration));
  return CheckpointMarker{directory + "/" + name, iteration, "megatron"};
}

absl::StatusOr<CheckpointMarker> FromDeepSpeed(const std::string& directory,
                                               const std::string& tag) {
  const std::string file = directory + "/latest";
  bool safe = !tag.empty() && tag != "." && tag != "..";
  for (char c : tag) {
    if (c == '/' || !std::isprint(static_cast<unsigned char>(c))) safe = false;
  }
  if (!safe) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": expected a checkpoint tag such as global_step1000, found \"",
        tag.substr(0, 64), "\""));
  }
  // Tags are usually global_stepN: take the trailing number as the step.
  size_t digits = tag.size();
  while (digits > 0 &&
         std::isdigit(static_cast<unsigned char>(tag[digits - 1]))) {
    --digits;
  }
  int64_t step = -1;
  if (digits < tag.size()) (void)absl::SimpleAtoi(tag.substr(digits), &step);
  return CheckpointMarker{directory + "/" + tag, step, "deepspeed"};
}

}  // namespace

absl::StatusOr<std::optional<CheckpointMarker>> ReadCheckpointMarker(
    const std::string& directory, const RankIdentity& user,
    std::chrono::milliseconds timeout) {
  int64_t megatron_time = 0, deepspeed_time = 0;
  absl::StatusOr<std::optional<std::string>> megatron =
      ReadMarker(directory + "/latest_checkpointed_iteration.txt", user,
                 timeout, megatron_time);
  if (!megatron.ok()) return megatron.status();
  absl::StatusOr<std::optional<std::string>> deepspeed =
      ReadMarker(directory + "/latest", user, timeout, deepspeed_time);
  if (!deepspeed.ok()) return deepspeed.status();
  if (!megatron->has_value() && !deepspeed->has_value()) {
    return std::optional<CheckpointMarker>();
  }
  absl::StatusOr<CheckpointMarker> marker =
      megatron->has_value() &&
              (!deepspeed->has_value() || megatron_time >= deepspeed_time)
          ? FromMegatron(directory, **megatron)
          : FromDeepSpeed(directory, **deepspeed);
  if (!marker.ok()) return marker.status();
  return std::optional<CheckpointMarker>(*marker);
}

}  // namespace gantry::agent
