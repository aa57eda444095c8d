// The exported environments of the last few submissions, per user, so that
// the jobs of a sweep, which export the very same environment, store it
// once: a submission whose variables equal a remembered environment of the
// same user refers to the stored copy (JobRecord.environment_id) instead of
// writing another. Under a flood of submissions the environment was most
// of each job's bytes in the synced write.
//
// A reference stays good: environments are never deleted from the store,
// and the copy referred to was staged in the same batch or an earlier one,
// which the store writer commits first.
//
// Not thread-safe: the controller's loop only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/map.h>

namespace gantry {

class RecentEnvironments {
 public:
  using Variables = google::protobuf::Map<std::string, std::string>;

  explicit RecentEnvironments(size_t capacity = 16) : capacity_(capacity) {}

  // The id under which `uid` already stored exactly `variables`, if it is
  // remembered. Otherwise remembers `variables` as stored under `new_id`
  // (the caller stores them there) and returns nullopt.
  std::optional<uint64_t> FindOrRemember(uint32_t uid, uint64_t new_id,
                                         const Variables& variables);

 private:
  struct Entry {
    uint32_t uid;
    uint64_t fingerprint;  // Fingerprint(variables), checked first
    uint64_t id;
    std::vector<std::pair<std::string, std::string>> variables;
  };

  // The same for equal maps whatever their iteration order.
  static uint64_t Fingerprint(const Variables& variables);
  static bool Equal(const Entry& entry, const Variables& variables);

  const size_t capacity_;
  std::deque<Entry> entries_;  // the most recently used first
};

}  // namespace gantry
