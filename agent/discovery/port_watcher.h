// Watches RDMA devices for port events (a port going up or down, a LID or
// GID table change, a fatal device error) so that the agent can report them
// in its next heartbeat instead of waiting for the next full discovery.
//
// Start() opens every libibverbs device and runs one thread that polls each
// device's async event fd together with an eventfd used to stop it; every
// event is acknowledged at once and queued with the port's attributes as
// read right after the event. TakeEvents() hands the queued events over. With
// no devices (no HCA, no RDMA subsystem) Start() succeeds and no thread runs.
//
// Thread-safety: TakeEvents(), dropped() and running() may be called from any
// thread at any time; Stop(), source_count() and the destructor from the
// thread that owns the watcher.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "gantry/v1/types.pb.h"

namespace gantry::agent {

struct PortEvent {
  std::string device;  // mlx5_0
  uint32_t port = 0;   // 0 for device-wide events
  // "PORT_ACTIVE", "PORT_ERR", "LID_CHANGE", "PKEY_CHANGE", "SM_CHANGE",
  // "CLIENT_REREGISTER", "GID_CHANGE", "DEVICE_FATAL".
  std::string event;
  // The port right after the event; absent when it could not be read (and
  // for device-wide events).
  std::optional<v1::HcaPort> now;
};

class PortWatcher {
 public:
  // Events kept between two TakeEvents() calls; older ones are dropped (and
  // counted) when a flapping link produces more.
  static constexpr size_t kMaxQueued = 4096;

  // Something to watch: `fd` becomes readable when events are pending (it
  // must be non-blocking); `read` then appends them without blocking.
  struct Source {
    int fd = -1;
    std::function<void(std::vector<PortEvent>*)> read;
  };

  // Opens every RDMA device and starts watching. A device that cannot be
  // opened is skipped (and logged).
  // Errors: UNAVAILABLE when libibverbs fails other than with ENOSYS (see
  // DiscoverVerbsDevices), INTERNAL when the eventfd or thread cannot be
  // created.
  static absl::StatusOr<std::unique_ptr<PortWatcher>> Start();

  // Watches the given sources instead of devices (tests). The watcher does
  // not close their fds.
  static absl::StatusOr<std::unique_ptr<PortWatcher>> TEST_StartWithSources(
      std::vector<Source> sources);

  PortWatcher(const PortWatcher&) = delete;
  PortWatcher& operator=(const PortWatcher&) = delete;
  ~PortWatcher();  // Stop()

  // Stops the thread and closes the devices. Idempotent.
  void Stop();

  // The events queued since the last call, oldest first.
  std::vector<PortEvent> TakeEvents();

  // Events dropped because the queue was full, since Start().
  uint64_t dropped() const;
  // Devices (or sources) being watched.
  size_t source_count() const { return sources_.size(); }
  // Whether the watcher thread runs (false with nothing to watch, or after
  // Stop()).
  bool running() const { return running_.load(); }

 private:
  struct Device;  // an open libibverbs context (port_watcher.cc)

  PortWatcher(std::vector<Source> sources,
              std::vector<std::unique_ptr<Device>> devices);
  absl::Status Launch();
  void Run();

  std::vector<Source> sources_;
  std::vector<std::unique_ptr<Device>> devices_;  // owns what sources_ read
  int stop_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> running_{false};

  mutable Mutex mutex_;
  std::deque<PortEvent> queue_ ABSL_GUARDED_BY(mutex_);
  uint64_t dropped_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace gantry::agent
