// The simulated fleet's pure parts: node names, option checks and the
// synthetic inventory. (The streams themselves are exercised against the
// real gantryd by tests/integration/test_simulated_fleet.py.)

#include "agent/simulated/simulated_fleet.h"

#include <regex>
#include <set>

#include <catch2/catch.hpp>

namespace gantry::agent {

TEST_CASE("simulated node names are PREFIX plus a padded index") {
  CHECK(SimulatedNameWidth(1, 50) == 5);
  CHECK(SimulatedNameWidth(1, 99999) == 5);
  CHECK(SimulatedNameWidth(1, 100000) == 6);
  CHECK(SimulatedNameWidth(99990, 20) == 6);
  CHECK(SimulatedNodeName("sim", 1, 5) == "sim00001");
  CHECK(SimulatedNodeName("sim", 10000, 5) == "sim10000");
  CHECK(SimulatedNodeName("rack3-", 42, 6) == "rack3-000042");
  CHECK(SimulatedNodeName("n", 1234567, 5) == "n1234567");
}

TEST_CASE("fleet options must make valid node names") {
  SimulatedFleetOptions options;
  options.nodes = 10;
  CHECK(CheckSimulatedFleetOptions(options).ok());

  SECTION("prefixes the controller would refuse") {
    for (const char* bad : {"", "-sim", "sim node", "sim/", ".x"}) {
      INFO(bad);
      options.name_prefix = bad;
      absl::Status status = CheckSimulatedFleetOptions(options);
      CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    }
  }
  SECTION("names longer than 63 characters") {
    options.name_prefix = std::string(58, 'a');
    CHECK(CheckSimulatedFleetOptions(options).ok());  // 58 + 5 digits
    options.name_prefix = std::string(59, 'a');
    CHECK_FALSE(CheckSimulatedFleetOptions(options).ok());
  }
  SECTION("counts") {
    options.nodes = 0;
    CHECK_FALSE(CheckSimulatedFleetOptions(options).ok());
    options.nodes = 10;
    options.threads = 0;
    CHECK_FALSE(CheckSimulatedFleetOptions(options).ok());
    options.threads = 1;
    options.nodes_per_connection = 0;
    CHECK_FALSE(CheckSimulatedFleetOptions(options).ok());
    options.nodes_per_connection = 1;
    options.first_index = UINT32_MAX - 5;
    CHECK_FALSE(CheckSimulatedFleetOptions(options).ok());
  }
}

TEST_CASE("the synthetic inventory is a small, consistent GPU node") {
  v1::NodeInventory inventory = SyntheticNodeInventory();
  CHECK(inventory.cpus() == 32);
  CHECK(inventory.cores() == 16);
  CHECK(inventory.packages() == 1);
  CHECK(inventory.numa_nodes() == 1);
  CHECK(inventory.memory_mb() == 128 * 1024);
  REQUIRE(inventory.gpus_size() == 8);
  std::set<uint32_t> indices;
  std::set<std::string> buses;
  for (const v1::GpuInfo& gpu : inventory.gpus()) {
    indices.insert(gpu.index());
    buses.insert(gpu.pci_bus_id());
  }
  CHECK(indices == std::set<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(buses.size() == 8);
  REQUIRE(inventory.network_devices_size() == 1);
  CHECK(inventory.network_devices(0).role() == "management");
  CHECK(inventory.source().find("synthetic") != std::string::npos);
}

}  // namespace gantry::agent
