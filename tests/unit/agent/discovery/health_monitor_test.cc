// Node health from discovery: GPUs looked up in a fake sysfs tree, HCA port
// events fed through the port watcher's test seam.
#include "agent/discovery/health_monitor.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

namespace gantry::agent {
namespace health_monitor_test {

namespace fs = std::filesystem;

v1::NodeInventory TwoGpusOneHca() {
  v1::NodeInventory inventory;
  for (uint32_t i = 0; i < 2; ++i) {
    v1::GpuInfo* gpu = inventory.add_gpus();
    gpu->set_index(i);
    gpu->set_pci_bus_id(i == 0 ? "0000:4e:00.0" : "0000:5f:00.0");
  }
  v1::NetworkDevice* hca = inventory.add_network_devices();
  hca->set_name("mlx5_0");
  v1::HcaPort* port = hca->add_ports();
  port->set_port(1);
  port->set_state("ACTIVE");
  port->set_rate_gbps(400);
  return inventory;
}

TEST_CASE("a GPU gone from the PCI bus is a problem", "[health]") {
  char pattern[] = "/tmp/gantry-sysfs-XXXXXX";
  const std::string root = mkdtemp(pattern);
  fs::create_directories(root + "/bus/pci/devices/0000:4e:00.0");
  fs::create_directories(root + "/bus/pci/devices/0000:5f:00.0");
  HealthMonitor monitor(TwoGpusOneHca(), root, nullptr);
  CHECK(monitor.Check().empty());
  fs::remove(root + "/bus/pci/devices/0000:5f:00.0");
  CHECK(monitor.Check() ==
        std::vector<std::string>{"GPU 1 (0000:5f:00.0) is gone"});
  fs::remove_all(root);
}

TEST_CASE("without a sysfs root GPUs are not checked", "[health]") {
  HealthMonitor monitor(TwoGpusOneHca(), "", nullptr);
  CHECK(monitor.Check().empty());
}

TEST_CASE("a port leaving ACTIVE is a problem and an update", "[health]") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  PortWatcher::Source source;
  source.fd = fds[0];
  source.read = [fd = fds[0]](std::vector<PortEvent>* events) {
    char byte = 0;
    if (read(fd, &byte, 1) != 1) return;
    PortEvent event;
    event.device = "mlx5_0";
    event.port = 1;
    event.event = byte == 'd' ? "PORT_ERR" : "PORT_ACTIVE";
    v1::HcaPort now;
    now.set_port(1);
    now.set_state(byte == 'd' ? "DOWN" : "ACTIVE");
    event.now = now;
    events->push_back(event);
  };
  auto watcher = PortWatcher::TEST_StartWithSources({source});
  REQUIRE(watcher.ok());
  HealthMonitor monitor(TwoGpusOneHca(), "", std::move(*watcher));
  CHECK(monitor.Check().empty());

  REQUIRE(write(fds[1], "d", 1) == 1);
  std::vector<std::string> problems;
  for (int i = 0; i < 200 && problems.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    problems = monitor.Check();
  }
  CHECK(problems ==
        std::vector<std::string>{"mlx5_0 port 1 left ACTIVE (now DOWN)"});
  std::vector<v1::NetworkDevice> updates = monitor.TakePortUpdates();
  REQUIRE(updates.size() == 1);
  CHECK(updates[0].name() == "mlx5_0");
  CHECK(updates[0].ports(0).state() == "DOWN");
  CHECK(monitor.TakePortUpdates().empty());

  REQUIRE(write(fds[1], "u", 1) == 1);
  for (int i = 0; i < 200 && !problems.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    problems = monitor.Check();
  }
  CHECK(problems.empty());
  close(fds[1]);
  close(fds[0]);
}

}  // namespace health_monitor_test
}  // namespace gantry::agent
