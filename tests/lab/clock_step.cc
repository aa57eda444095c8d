// The test lab's clock-step fault (faults.py step_clock), as an LD_PRELOAD
// library under one daemon: CLOCK_REALTIME (and gettimeofday, time) read
// as the machine's plus the whole seconds in the file that
// GANTRY_LAB_CLOCK_FILE names, read again at most once a second; the
// monotonic clocks untouched, as a real step (NTP, `date -s`) leaves them.
// The wall clock is one for the whole machine, so a step confined to one
// host must be made this way.
//
// Not libfaketime: its start-up resolves the real functions with dlsym,
// which allocates, and gantryd's jemalloc reads the clock while it starts,
// a recursion libfaketime gives up on. Here the real clock is the system
// call itself, and nothing allocates.

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;

std::atomic<int64_t> offset_seconds{0};
std::atomic<int64_t> next_read_ns{0};

int RealClockGettime(clockid_t id, timespec* time) {
  return static_cast<int>(syscall(SYS_clock_gettime, id, time));
}

int64_t OffsetSeconds() {
  timespec now{};
  if (RealClockGettime(CLOCK_MONOTONIC, &now) != 0) return offset_seconds;
  const int64_t now_ns = now.tv_sec * kNsPerSecond + now.tv_nsec;
  int64_t due = next_read_ns.load(std::memory_order_relaxed);
  if (now_ns >= due &&
      next_read_ns.compare_exchange_strong(due, now_ns + kNsPerSecond)) {
    const char* path = std::getenv("GANTRY_LAB_CLOCK_FILE");
    const int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
      char text[32];
      const ssize_t length = read(fd, text, sizeof text - 1);
      close(fd);
      if (length > 0) {
        text[length] = '\0';
        offset_seconds = std::strtoll(text, nullptr, 10);
      }
    }
  }
  return offset_seconds;
}

bool IsWallClock(clockid_t id) {
  return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI;
}

}  // namespace

extern "C" {

int clock_gettime(clockid_t id, timespec* time) noexcept {
  const int result = RealClockGettime(id, time);
  if (result == 0 && IsWallClock(id)) time->tv_sec += OffsetSeconds();
  return result;
}

int gettimeofday(timeval* __restrict time, void* __restrict) noexcept {
  timespec now{};
  const int result = clock_gettime(CLOCK_REALTIME, &now);
  if (result == 0) {
    time->tv_sec = now.tv_sec;
    time->tv_usec = now.tv_nsec / 1000;
  }
  return result;
}

time_t time(time_t* out) noexcept {
  timespec now{};
  if (clock_gettime(CLOCK_REALTIME, &now) != 0) return -1;
  if (out != nullptr) *out = now.tv_sec;
  return now.tv_sec;
}

}  // extern "C"
