"""The switch tree: imported by an admin, shown to everyone, matched to the
agents, persisted across controller restarts, and a bad file changes
nothing."""
import os

from gantry_cluster import ClusterTestCase, main, shared_data

SMALL_TREE = """# two leaves under one spine
SwitchName=spine Switches=leaf[1-2]
SwitchName=leaf1 Nodes=node[01-02]
SwitchName=leaf2 Nodes=node[03-04]
"""


class TopologyTest(ClusterTestCase):

    def test_import_show_match_and_persist(self):
        c = self.start_cluster(agents=3)
        self.assertFalse(c.cli_json("topology")["present"])
        with open(c.path("tree.conf"), "w") as f:
            f.write(SMALL_TREE)
        c.cli("topology", "import", "tree.conf")
        report = c.cli_json("topology")
        self.assertEqual((report["switches"], report["levels"], report["nodes"]), (3, 2, 4))
        self.assertEqual(report["unserved"], ["node04"])  # no agent serves it
        self.assertEqual(report["unknown_agents"], [])
        nodes = c.nodes()
        self.assertEqual(nodes["node01"]["leaf_switches"], ["leaf1"])
        self.assertEqual(nodes["node03"]["leaf_switches"], ["leaf2"])
        self.assertIn("LEAF", c.cli("nodes", "-N").stdout)

        # A bad file is refused with file and line; the tree stays.
        with open(c.path("loop.conf"), "w") as f:
            f.write("SwitchName=a Switches=b\nSwitchName=b Switches=a\n")
        result = c.cli("topology", "import", "loop.conf", check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("loop.conf:1: switch loop", result.stderr)
        with open(c.path("twice.conf"), "w") as f:
            f.write("SwitchName=s1 Nodes=n1\nSwitchName=s2 Nodes=n1\n")
        result = c.cli("topology", "import", "twice.conf", check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("twice.conf:2", result.stderr)
        self.assertEqual(c.cli_json("topology")["source"], "tree.conf")

        c.restart_controller()
        c.wait_nodes_up(["node01", "node02", "node03"])
        report = c.cli_json("topology")
        self.assertEqual(report["nodes"], 4)
        self.assertEqual(c.nodes()["node02"]["leaf_switches"], ["leaf1"])

    def test_real_fabric_dump_imports(self):
        dump = shared_data("fabric", "ibnetdiscover",
                           "topograph-dgx-h100-ndr-superpod.ibnetdiscover.out")
        if not os.path.exists(dump):
            self.skipTest(f"shared data not found at {dump}")
        c = self.start_cluster(agents=1)
        report = c.cli_json("topology", "import", dump)
        self.assertEqual(report["format"], "ibnetdiscover")
        self.assertGreater(report["switches"], 0)
        # The agent here has no HCA the fabric knows: reported, not dropped.
        self.assertEqual(report["unknown_agents"], ["node01"])
        self.assertGreater(len(report["unserved"]), 0)


if __name__ == "__main__":
    main()
