#include "daemon/controller/features/memory_checkpoints/memory_checkpoint_ledger.h"

#include <catch2/catch.hpp>

#include "tests/unit/daemon/controller/features/memory_checkpoint_reports.h"

namespace gantry {
namespace memory_checkpoint_ledger_test {

// leaf A: a1, a2; leaf B: b1, b2.
bool Apart(const std::string& x, const std::string& y) { return x[0] != y[0]; }

bool AnyUsable(const std::string&) { return true; }

TEST_CASE("a step is protected only when every rank holds it in two domains") {
  MemoryCheckpointLedger ledger;
  ledger.Report("a1", HeldSnapshots({{7, 0, 10, false}, {7, 0, 20, false}}));
  ledger.Report("a2", HeldSnapshots({{7, 1, 10, false}, {7, 1, 20, false}}));
  CHECK_FALSE(ledger.ProtectedStep(7, 2, Apart).has_value());

  // Rank 0's step 20 reaches leaf B, rank 1's only a node of its own leaf.
  ledger.Report("b1", HeldSnapshots({{7, 0, 10, true}, {7, 0, 20, true}}));
  ledger.Report("a1", HeldSnapshots({{7, 0, 10, false},
                                     {7, 0, 20, false},
                                     {7, 1, 10, true},
                                     {7, 1, 20, true}}));
  CHECK_FALSE(ledger.ProtectedStep(7, 2, Apart).has_value());

  ledger.Report("b2", HeldSnapshots({{7, 1, 10, true}}));
  CHECK(ledger.ProtectedStep(7, 2, Apart) == 10);
  ledger.Report("b2", HeldSnapshots({{7, 1, 10, true}, {7, 1, 20, true}}));
  CHECK(ledger.ProtectedStep(7, 2, Apart) == 20);

  // A report replaces the node's last one: b2 lost what it held.
  CHECK(ledger.Report("b2", HeldSnapshots({})) == std::set<uint64_t>{7});
  CHECK_FALSE(ledger.ProtectedStep(7, 2, Apart).has_value());
}

TEST_CASE("a restore puts each rank where the node that ran it was") {
  MemoryCheckpointLedger ledger;
  // Attempt 1 ran rank 0 on a1 and rank 1 on a2; replicas on b1 and b2.
  ledger.Report("a1", HeldSnapshots({{7, 0, 20, false}}));
  ledger.Report("a2", HeldSnapshots({{7, 1, 20, false}}));
  ledger.Report("b1", HeldSnapshots({{7, 0, 20, true}}));
  ledger.Report("b2", HeldSnapshots({{7, 1, 20, true}}));

  // a1 died; the restart runs on a2 (now first) and b1.
  auto usable = [](const std::string& node) { return node != "a1"; };
  std::optional<MemoryCheckpointLedger::Restore> restore =
      ledger.PlanRestore(7, 2, {"a1", "a2"}, {"a2", "b1"}, usable);
  REQUIRE(restore.has_value());
  CHECK(restore->step == 20);
  REQUIRE(restore->by_node.at("a2").size() == 1);
  CHECK(restore->by_node.at("a2")[0].rank == 0);
  CHECK(restore->by_node.at("a2")[0].holder == "b1");
  REQUIRE(restore->by_node.at("b1").size() == 1);
  CHECK(restore->by_node.at("b1")[0].rank == 1);
  CHECK(restore->by_node.at("b1")[0].holder != "a1");

  // The same nodes again: each finds its own rank at home.
  restore = ledger.PlanRestore(7, 2, {"a1", "a2"}, {"a1", "a2"}, AnyUsable);
  REQUIRE(restore.has_value());
  CHECK(restore->by_node.at("a1")[0].holder == "a1");
  CHECK(restore->by_node.at("a2")[0].holder == "a2");
}

TEST_CASE("a restore takes the newest step every rank still has") {
  MemoryCheckpointLedger ledger;
  ledger.Report("a1", HeldSnapshots({{7, 0, 10, false}, {7, 0, 20, false}}));
  ledger.Report("a2", HeldSnapshots({{7, 1, 10, false}, {7, 1, 20, false}}));
  ledger.Report("b1", HeldSnapshots({{7, 0, 10, true}, {7, 1, 10, true}}));
  // a1 lost: rank 0's step 20 was only there.
  auto usable = [](const std::string& node) { return node != "a1"; };
  std::optional<MemoryCheckpointLedger::Restore> restore =
      ledger.PlanRestore(7, 2, {"a1", "a2"}, {"b2", "a2"}, usable);
  REQUIRE(restore.has_value());
  CHECK(restore->step == 10);

  // Both holders of rank 0 lost: nothing to restore.
  auto neither = [](const std::string& node) {
    return node != "a1" && node != "b1";
  };
  CHECK_FALSE(ledger.PlanRestore(7, 2, {"a1", "a2"}, {"b2", "a2"}, neither));
  // Another shape: the ranks would not land where they ran.
  CHECK_FALSE(ledger.PlanRestore(7, 2, {"a1", "a2"}, {"a2"}, AnyUsable));
  // Nothing of another job.
  CHECK_FALSE(ledger.PlanRestore(8, 2, {"a1", "a2"}, {"a1", "a2"}, AnyUsable));
}

TEST_CASE("a rank not reported yet holds back protection and restore") {
  MemoryCheckpointLedger ledger;
  // Rank 0 is held twice over; rank 1's node has not reported yet.
  ledger.Report("a1", HeldSnapshots({{7, 0, 3, false}}));
  ledger.Report("b1", HeldSnapshots({{7, 0, 3, true}}));
  CHECK(ledger.ProtectedStep(7, 1, Apart) == 3);
  CHECK_FALSE(ledger.ProtectedStep(7, 2, Apart).has_value());
  CHECK_FALSE(ledger.PlanRestore(7, 2, {"a1", "a2"}, {"a1", "b2"}, AnyUsable));
  ledger.Report("a2", HeldSnapshots({{7, 1, 3, false}}));
  ledger.Report("b2", HeldSnapshots({{7, 1, 3, true}}));
  CHECK(ledger.ProtectedStep(7, 2, Apart) == 3);
  CHECK(ledger.PlanRestore(7, 2, {"a1", "a2"}, {"a1", "b2"}, AnyUsable));
  CHECK_FALSE(ledger.ProtectedStep(7, 0, Apart).has_value());
  CHECK(ledger.Describe(7) ==
        "rank 0: step 3 on a1 b1 (replica); rank 1: step 3 on a2 b2 (replica)");
}

TEST_CASE("forgetting a job drops it from every node") {
  MemoryCheckpointLedger ledger;
  ledger.Report("a1", HeldSnapshots({{7, 0, 10, false}, {8, 0, 5, false}}));
  ledger.Report("b1", HeldSnapshots({{7, 0, 10, true}}));
  CHECK(ledger.HoldersOf(7) == std::set<std::string>{"a1", "b1"});
  ledger.Forget(7);
  CHECK(ledger.HoldersOf(7).empty());
  CHECK(ledger.JobsOn("a1") == std::set<uint64_t>{8});
  CHECK(ledger.JobsOn("b1").empty());
}

TEST_CASE("peers are in another failure domain, the job's own first") {
  // A job across both leaves: each node's peer is a job node of the other.
  std::map<std::string, std::string> peers = ChooseMemoryCheckpointPeers(
      {"a1", "a2", "b1", "b2"}, {"a1", "a2", "b1", "b2", "c1"}, Apart);
  REQUIRE(peers.size() == 4);
  for (const auto& [node, peer] : peers) {
    CHECK(Apart(node, peer));
    CHECK(peer[0] != 'c');
  }

  // A job within one leaf: its peers are outside it, spread.
  peers = ChooseMemoryCheckpointPeers({"a1", "a2"}, {"a1", "a2", "b1", "b2"},
                                      Apart);
  CHECK(peers.at("a1")[0] == 'b');
  CHECK(peers.at("a2")[0] == 'b');
  CHECK(peers.at("a1") != peers.at("a2"));

  // One domain only: another node is better than none.
  auto same = [](const std::string&, const std::string&) { return false; };
  peers = ChooseMemoryCheckpointPeers({"a1", "a2"}, {"a1", "a2"}, same);
  CHECK(peers.at("a1") == "a2");
  CHECK(peers.at("a2") == "a1");

  // A node that cannot hold snapshots gets none and gives none.
  peers = ChooseMemoryCheckpointPeers({"a1", "a2"}, {"a2"}, same);
  CHECK_FALSE(peers.contains("a1"));
  CHECK_FALSE(peers.contains("a2"));
}

}  // namespace memory_checkpoint_ledger_test
}  // namespace gantry
