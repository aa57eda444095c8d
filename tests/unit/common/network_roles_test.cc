// Network roles (compute / storage / management), their overrides, and the
// NCCL variables built from them, as tables of small hand-made nodes.

#include "common/network_roles.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

namespace gantry {
namespace network_roles_test {

Nic Rdma(std::string name, std::string bus, std::vector<uint32_t> gpus,
         std::vector<NicPort> ports = {}) {
  Nic nic;
  nic.name = std::move(name);
  nic.rdma = true;
  nic.pci_bus_id = std::move(bus);
  nic.nearest_gpus = std::move(gpus);
  nic.ports = std::move(ports);
  return nic;
}

Nic Netdev(std::string name, std::string bus, bool ipoib = false,
           bool default_route = false) {
  Nic nic;
  nic.name = std::move(name);
  nic.pci_bus_id = std::move(bus);
  nic.ipoib = ipoib;
  nic.default_route = default_route;
  return nic;
}

NicPort Ib(uint32_t port, bool active = true) {
  NicPort p;
  p.port = port;
  p.active = active;
  return p;
}

NicPort Roce(uint32_t port, int gid, bool active = true) {
  NicPort p = Ib(port, active);
  p.roce = true;
  p.roce_v2_gid_index = gid;
  return p;
}

std::map<std::string, std::string> Roles(const std::vector<Nic>& nics) {
  std::map<std::string, std::string> roles;
  for (const Nic& nic : nics) {
    roles[nic.name] = std::string(NetworkRoleName(nic.role));
  }
  return roles;
}

// A GPU node like the Dell XE8640 in shared/data: 4 GPUs, a dual-port CX-6
// (mlx5_0 near GPU 0, mlx5_1 near none), CX-7s mlx5_2 (GPU 1) and mlx5_3
// (GPUs 2 and 3), each with its IPoIB interface, and two on-board ports.
std::vector<Nic> DellLike() {
  return {Netdev("eno8303", "0000:01:00.0"),
          Netdev("eno8403", "0000:01:00.1"),
          Rdma("mlx5_2", "0000:5e:00.0", {1}),
          Netdev("ibp94s0", "0000:5e:00.0", true),
          Rdma("mlx5_0", "0000:4d:00.0", {0}),
          Netdev("hsi0", "0000:4d:00.0", true),
          Rdma("mlx5_1", "0000:4d:00.1", {}),
          Netdev("ibs2f1", "0000:4d:00.1", true),
          Rdma("mlx5_3", "0000:da:00.0", {2, 3}),
          Netdev("ibp218s0", "0000:da:00.0", true)};
}

TEST_CASE("default roles of an InfiniBand GPU node") {
  std::vector<Nic> nics = DellLike();
  ClassifyNics(&nics, {});
  CHECK(Roles(nics) == std::map<std::string, std::string>{
                           {"eno8303", "management"},
                           {"eno8403", "storage"},
                           {"mlx5_0", "compute"},
                           {"hsi0", "compute"},
                           {"mlx5_1", "storage"},
                           {"ibs2f1", "storage"},
                           {"mlx5_2", "compute"},
                           {"ibp94s0", "compute"},
                           {"mlx5_3", "compute"},
                           {"ibp218s0", "compute"},
                       });
}

TEST_CASE("the default route decides the management interface") {
  std::vector<Nic> nics = DellLike();
  nics[1].default_route = true;  // eno8403
  ClassifyNics(&nics, {});
  CHECK(Roles(nics)["eno8403"] == "management");
  CHECK(Roles(nics)["eno8303"] == "storage");
  CHECK(NcclSocketIfname(nics) == "=eno8403");
}

TEST_CASE("overrides win, and a management override replaces the pick") {
  std::vector<Nic> nics = DellLike();
  ClassifyNics(&nics, {{"mlx5_1", NetworkRole::kCompute},
                       {"eno8403", NetworkRole::kManagement},
                       {"not-here", NetworkRole::kStorage}});
  const auto roles = Roles(nics);
  CHECK(roles.at("mlx5_1") == "compute");
  CHECK(roles.at("ibs2f1") == "compute");  // follows its RDMA device
  CHECK(roles.at("eno8403") == "management");
  CHECK(roles.at("eno8303") == "storage");
}

TEST_CASE("without plain Ethernet there is no management interface") {
  std::vector<Nic> nics = {Rdma("mlx5_0", "a", {0}), Netdev("ib0", "a", true)};
  ClassifyNics(&nics, {});
  CHECK(Roles(nics) == std::map<std::string, std::string>{{"mlx5_0", "compute"},
                                                          {"ib0", "compute"}});
  CHECK(NcclSocketIfname(nics).empty());
}

TEST_CASE("NCCL_IB_HCA follows the rank's GPUs") {
  std::vector<Nic> nics = DellLike();
  ClassifyNics(&nics, {});
  struct Row {
    std::vector<uint32_t> gpus;
    const char* hca;
  };
  for (const Row& row : {
           Row{{0}, "=mlx5_0:1"}, Row{{1}, "=mlx5_2:1"},
           Row{{3, 2}, "=mlx5_3:1"},  // both near mlx5_3: once
           Row{{3, 0, 1, 2}, "=mlx5_3:1,mlx5_0:1,mlx5_2:1"},
           Row{{}, "=mlx5_2:1,mlx5_0:1,mlx5_3:1"},   // CPU-only rank: all
           Row{{9}, "=mlx5_2:1,mlx5_0:1,mlx5_3:1"},  // unknown GPU: all
       }) {
    INFO(row.gpus.size());
    CHECK(NcclIbHca(nics, row.gpus) == row.hca);
  }
  CHECK_FALSE(NcclIbGidIndex(nics, {0}).has_value());  // InfiniBand
  CHECK(
      NcclEnvironment(nics, {1, 0}) ==
      std::map<std::string, std::string>{{"NCCL_IB_HCA", "=mlx5_2:1,mlx5_0:1"},
                                         {"NCCL_SOCKET_IFNAME", "=eno8303"}});
}

TEST_CASE("ports: active ones listed, down HCAs skipped") {
  std::vector<Nic> nics = {
      Rdma("mlx5_0", "a", {0}, {Ib(1), Ib(2)}),         // dual-port, both up
      Rdma("mlx5_1", "b", {1}, {Ib(1, false)}),         // down
      Rdma("mlx5_2", "c", {2}, {Ib(1, false), Ib(2)}),  // port 2 only
  };
  ClassifyNics(&nics, {});
  CHECK(NcclIbHca(nics, {0, 1, 2}) == "=mlx5_0:1,mlx5_0:2,mlx5_2:2");
  CHECK(NcclIbHca(nics, {1}) == "=mlx5_0:1,mlx5_0:2,mlx5_2:2");  // fallback
  nics[0].ports = {Ib(1, false)};
  nics[2].ports = {Ib(1, false)};
  CHECK(NcclIbHca(nics, {0}).empty());
  CHECK(NcclEnvironment(nics, {0}).empty());
}

TEST_CASE("NCCL_IB_GID_INDEX only for RoCE ports that agree") {
  struct Row {
    const char* what;
    std::vector<Nic> nics;
    std::vector<uint32_t> gpus;
    std::optional<int> gid;
  };
  const std::vector<Row> rows = {
      {"RoCE, same index",
       {Rdma("mlx5_0", "a", {0}, {Roce(1, 3)}),
        Rdma("mlx5_1", "b", {1}, {Roce(1, 3)})},
       {0, 1},
       3},
      {"RoCE, indices differ",
       {Rdma("mlx5_0", "a", {0}, {Roce(1, 3)}),
        Rdma("mlx5_1", "b", {1}, {Roce(1, 5)})},
       {0, 1},
       std::nullopt},
      {"only the rank's HCA counts",
       {Rdma("mlx5_0", "a", {0}, {Roce(1, 3)}),
        Rdma("mlx5_1", "b", {1}, {Roce(1, 5)})},
       {1},
       5},
      {"RoCE without a v2 GID",
       {Rdma("mlx5_0", "a", {0}, {Roce(1, -1)})},
       {0},
       std::nullopt},
      {"InfiniBand", {Rdma("mlx5_0", "a", {0}, {Ib(1)})}, {0}, std::nullopt},
      {"ports unknown", {Rdma("mlx5_0", "a", {0})}, {0}, std::nullopt},
      {"a down RoCE port is not selected",
       {Rdma("mlx5_0", "a", {0}, {Roce(1, 1, false), Roce(2, 3)})},
       {0},
       3},
  };
  for (Row row : rows) {
    INFO(row.what);
    ClassifyNics(&row.nics, {});
    CHECK(NcclIbGidIndex(row.nics, row.gpus) == row.gid);
  }
}

TEST_CASE("role names round-trip") {
  for (NetworkRole role : {NetworkRole::kCompute, NetworkRole::kStorage,
                           NetworkRole::kManagement}) {
    CHECK(*ParseNetworkRole(NetworkRoleName(role)) == role);
  }
  CHECK(*ParseNetworkRole("Compute") == NetworkRole::kCompute);
  CHECK(ParseNetworkRole("fast").status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(NetworkRoleName(NetworkRole::kUnassigned).empty());
}

TEST_CASE("the default route from /proc/net/route") {
  const std::string header =
      "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU"
      "\tWindow\tIRTT\n";
  struct Row {
    const char* what;
    std::string text;
    const char* iface;
  };
  for (const Row& row : {
           Row{"one default route",
               header +
                   "eth0\t00000000\t0102A8C0\t0003\t0\t0\t100\t00000000\t0\t0"
                   "\t0\n"
                   "eth0\t0002A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0"
                   "\t0\n",
               "eth0"},
           Row{"lowest metric wins",
               header +
                   "eno2\t00000000\t0102A8C0\t0003\t0\t0\t200\t00000000\t0\t0"
                   "\t0\n"
                   "eno1\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0"
                   "\t0\n",
               "eno1"},
           Row{"route down",
               header + "eth0\t00000000\t0102A8C0\t0002\t0\t0\t100"
                        "\t00000000\t0\t0\t0\n",
               ""},
           Row{"no default",
               header + "eth0\t0002A8C0\t00000000\t0001\t0\t0\t0\t"
                        "00FFFFFF\t0\t0\t0\n",
               ""},
           Row{"not the format", "hello\n", ""},
           Row{"empty", "", ""},
       }) {
    INFO(row.what);
    CHECK(DefaultRouteInterface(row.text) == row.iface);
  }
}

}  // namespace network_roles_test
}  // namespace gantry
