// RDMA port events (see port_watcher.h).

#include "agent/discovery/port_watcher.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/discovery/verbs_discovery.h"
#include "common/errno_text.h"
#include "common/log.h"

namespace gantry::agent {
namespace {

// Port events and the device-wide fatal error; QP, CQ and SRQ events cannot
// occur (the watcher creates none).
const char* EventName(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_PORT_ACTIVE:
      return "PORT_ACTIVE";
    case IBV_EVENT_PORT_ERR:
      return "PORT_ERR";
    case IBV_EVENT_LID_CHANGE:
      return "LID_CHANGE";
    case IBV_EVENT_PKEY_CHANGE:
      return "PKEY_CHANGE";
    case IBV_EVENT_SM_CHANGE:
      return "SM_CHANGE";
    case IBV_EVENT_CLIENT_REREGISTER:
      return "CLIENT_REREGISTER";
    case IBV_EVENT_GID_CHANGE:
      return "GID_CHANGE";
    case IBV_EVENT_DEVICE_FATAL:
      return "DEVICE_FATAL";
    default:
      return nullptr;
  }
}

}  // namespace

struct PortWatcher::Device {
  std::string name;
  ibv_context* context = nullptr;

  ~Device() {
    if (context != nullptr) ibv_close_device(context);
  }

  // Everything pending on the (non-blocking) async fd.
  void Read(std::vector<PortEvent>* out) {
    ibv_async_event event;
    while (ibv_get_async_event(context, &event) == 0) {
      const ibv_event_type type = event.event_type;
      const bool device_wide = type == IBV_EVENT_DEVICE_FATAL;
      const uint32_t port = device_wide ? 0 : event.element.port_num;
      ibv_ack_async_event(&event);
      const char* name = EventName(type);
      if (name == nullptr) continue;
      PortEvent e;
      e.device = this->name;
      e.port = port;
      e.event = name;
      if (!device_wide) {
        absl::StatusOr<v1::HcaPort> now = QueryPort(context, this->name, port);
        if (now.ok()) e.now = *std::move(now);
      }
      out->push_back(std::move(e));
    }
  }
};

PortWatcher::PortWatcher(std::vector<Source> sources,
                         std::vector<std::unique_ptr<Device>> devices)
    : sources_(std::move(sources)), devices_(std::move(devices)) {}

absl::StatusOr<std::unique_ptr<PortWatcher>> PortWatcher::Start() {
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) {
    const int err = errno;
    if (err != ENOSYS) {
      return absl::UnavailableError(
          absl::StrCat("ibv_get_device_list failed: ", ErrnoText(err)));
    }
    count = 0;
  }
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<Source> sources;
  for (int i = 0; i < count; ++i) {
    auto device = std::make_unique<Device>();
    device->name = ibv_get_device_name(list[i]);
    device->context = ibv_open_device(list[i]);
    if (device->context == nullptr) {
      log::Warn("cannot open RDMA device; its port events are not watched",
                {{"device", device->name}, {"error", ErrnoText(errno)}});
      continue;
    }
    const int fd = device->context->async_fd;
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      log::Warn("cannot make the async event fd non-blocking; not watched",
                {{"device", device->name}, {"error", ErrnoText(errno)}});
      continue;
    }
    Device* raw = device.get();
    sources.push_back(
        {fd, [raw](std::vector<PortEvent>* out) { raw->Read(out); }});
    devices.push_back(std::move(device));
  }
  if (list != nullptr) ibv_free_device_list(list);

  std::unique_ptr<PortWatcher> watcher(
      new PortWatcher(std::move(sources), std::move(devices)));
  if (absl::Status status = watcher->Launch(); !status.ok()) return status;
  return watcher;
}

absl::StatusOr<std::unique_ptr<PortWatcher>> PortWatcher::TEST_StartWithSources(
    std::vector<Source> sources) {
  std::unique_ptr<PortWatcher> watcher(new PortWatcher(std::move(sources), {}));
  if (absl::Status status = watcher->Launch(); !status.ok()) return status;
  return watcher;
}

absl::Status PortWatcher::Launch() {
  if (sources_.empty()) return absl::OkStatus();  // nothing to watch
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) {
    return absl::InternalError(
        absl::StrCat("eventfd failed: ", ErrnoText(errno)));
  }
  running_ = true;
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (const std::system_error& e) {
    running_ = false;
    return absl::InternalError(
        absl::StrCat("cannot start the port watcher thread: ", e.what()));
  }
  return absl::OkStatus();
}

void PortWatcher::Run() {
  std::vector<pollfd> fds;
  fds.push_back({stop_fd_, POLLIN, 0});
  for (const Source& source : sources_) fds.push_back({source.fd, POLLIN, 0});
  while (true) {
    for (pollfd& p : fds) p.revents = 0;
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      log::Error("poll failed; RDMA port events are no longer watched",
                 {{"error", ErrnoText(errno)}});
      break;
    }
    if (fds[0].revents != 0) break;  // Stop()
    std::vector<PortEvent> batch;
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      if ((fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0 &&
          (fds[i].revents & POLLIN) == 0) {
        log::Warn("an RDMA async event fd failed; no longer watched",
                  {{"fd", fds[i].fd}});
        fds[i].fd = -1;  // poll ignores negative fds
        continue;
      }
      sources_[i - 1].read(&batch);
    }
    if (batch.empty()) continue;
    MutexLock lock(mutex_);
    for (PortEvent& event : batch) {
      if (queue_.size() >= kMaxQueued) {
        queue_.pop_front();
        ++dropped_;
      }
      queue_.push_back(std::move(event));
    }
  }
  running_ = false;
}

void PortWatcher::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    // The eventfd cannot be full (it counts up to 2^64-2): the write only
    // fails if the fd is gone, and then the thread has ended anyway.
    if (write(stop_fd_, &one, sizeof(one)) < 0) {
      log::Warn("cannot signal the port watcher thread",
                {{"error", ErrnoText(errno)}});
    }
    thread_.join();
  }
  running_ = false;
  if (stop_fd_ >= 0) {
    close(stop_fd_);
    stop_fd_ = -1;
  }
  sources_.clear();
  devices_.clear();  // closes the device contexts
}

PortWatcher::~PortWatcher() { Stop(); }

std::vector<PortEvent> PortWatcher::TakeEvents() {
  MutexLock lock(mutex_);
  std::vector<PortEvent> events(std::make_move_iterator(queue_.begin()),
                                std::make_move_iterator(queue_.end()));
  queue_.clear();
  return events;
}

uint64_t PortWatcher::dropped() const {
  MutexLock lock(mutex_);
  return dropped_;
}

}  // namespace gantry::agent
