// What sealing the replication log costs (daemon/replication/record_seal.h):
// the leader seals every log entry it appends to etcd (AES-256-GCM with a
// derived nonce), and every standby opens each entry it applies. Prints,
// per entry size, the median time to seal and to open one entry on one
// core, and the rate that leaves: against the durable submission rate the
// HA benchmark measures (ha_bench.py), the share of one core sealing takes.
//
// Usage: gantry-seal-bench [entries-per-size]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "daemon/replication/record_seal.h"

namespace {

using Clock = std::chrono::steady_clock;

double MedianMicros(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int entries = argc > 1 ? std::max(10, std::atoi(argv[1])) : 20000;
  gantry::replication::RecordSeal seal(std::string(32, '\x5a') +
                                       "bench cluster key");
  std::printf("%-10s %12s %12s %14s\n", "entry", "seal us", "open us",
              "seals/s/core");
  for (size_t bytes : {512, 4096, 65536, 1 << 20}) {
    std::string plaintext(bytes, 'x');
    for (size_t i = 0; i < bytes; ++i) plaintext[i] = static_cast<char>(i * 7);
    const int count =
        bytes >= (1 << 20) ? std::max(10, entries / 100) : entries;
    std::vector<double> seal_us, open_us;
    seal_us.reserve(count);
    open_us.reserve(count);
    for (int i = 0; i < count; ++i) {
      const std::string key = "/gantry/log/" + std::to_string(i);
      const auto start = Clock::now();
      const std::string sealed = seal.Seal(key, plaintext);
      const auto sealed_at = Clock::now();
      const auto opened = seal.Open(key, sealed);
      const auto opened_at = Clock::now();
      if (!opened.ok() || opened->size() != bytes) {
        std::fprintf(stderr, "entry %d did not open\n", i);
        return 1;
      }
      seal_us.push_back(
          std::chrono::duration<double, std::micro>(sealed_at - start).count());
      open_us.push_back(
          std::chrono::duration<double, std::micro>(opened_at - sealed_at)
              .count());
    }
    const double seal_median = MedianMicros(seal_us);
    std::printf("%-10zu %12.2f %12.2f %14.0f\n", bytes, seal_median,
                MedianMicros(open_us), 1e6 / seal_median);
  }
  return 0;
}
