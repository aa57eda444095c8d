"""Placement on an imported tree whose trunks no switch joins (Slurm's test
case 6, ../shared/data/fabric/slurm) with an agent the tree does not list:
gantryd refuses a job bigger than every part at submit, never starts a job
across parts or beside the unlisted node, takes the unlisted node last,
a job queued before a re-import that splits the fabric waits with
PartitionNodeLimit and says why, and an elastic job does not grow onto a
part its nodes cannot reach. `gantry topology` shows the parts and the rule
for unlisted nodes."""
import os
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase, main, shared_data, wait_for

CASE_6 = shared_data("fabric", "slurm",
                     "slurm-test133-disconnected-trunks.topology.conf")

# Agents by where case 6 puts them: three on spineA (two leaves), one on
# spineB, two on leafC, and one the file does not list.
AGENTS = ["node1", "node2", "node9", "node17", "node33", "node34", "extra1"]

# The same nodes with spineA's leaves cut apart: no part has 3 nodes.
SPLIT = """SwitchName=leafA1 Nodes=node[1-8]
SwitchName=leafA2 Nodes=node[9-16]
SwitchName=spineB Switches=leafB1
SwitchName=leafB1 Nodes=node[17-24]
SwitchName=leafC Nodes=node[33-40]
"""


class FabricPartsTest(ClusterTestCase):

    def start(self):
        if not os.path.exists(CASE_6):
            self.skipTest(f"shared data not found at {CASE_6}")
        cluster = self.start_cluster(agents=0)
        for name in AGENTS:
            cluster.start_agent(name)
        cluster.wait_nodes_up(AGENTS)
        cluster.cli("topology", "import", CASE_6)
        return cluster

    def nodes_of(self, cluster, job_id):
        job = cluster.wait_job(job_id, "RUNNING")
        return gantry_cluster.expand_hostlist(job["nodelist"])

    def test_jobs_stay_within_one_part_and_unlisted_nodes_come_last(self):
        c = self.start()
        text = c.cli("topology").stdout
        # The tree, a line per switch (breaks kept, not escaped).
        self.assertIn("\nlevel 1 spineA children=leafA1*1,leafA2*1\n", text)
        self.assertIn("\nlevel 0 leafC nodes=node[33-40]\n", text)
        self.assertIn("Connected parts: 3 (no switch joins one to another; "
                      "a job runs within one)", text)
        self.assertIn("  spineA: 16 node(s) node[1-16]\n", text)
        self.assertIn("  spineB: 16 node(s) node[17-32]\n", text)
        self.assertIn("  leafC: 8 node(s) node[33-40]\n", text)
        self.assertIn("Agents the fabric does not know: extra1 (jobs go there "
                      "only when nothing on listed nodes fits, and never "
                      "beside listed nodes: --unlisted-nodes=last)", text)
        report = c.cli_json("topology")
        self.assertEqual([(p["name"], p["node_count"]) for p in report["parts"]],
                         [("spineA", 16), ("spineB", 16), ("leafC", 8)])
        self.assertEqual(report["unlisted_nodes"], "last")
        self.assertEqual(report["unknown_agents"], ["extra1"])

        script = c.write_script("hold.sh", "#!/bin/bash\nsleep 120\n")
        # Whole nodes, so that each job's nodes are taken from the others.
        whole = "--exclusive"
        # Seven nodes, but at most three of one part: refused, with why.
        refused = c.cli("batch", "--parsable", "--per-task", "-N", "4", script,
                        check=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn(
            "partition main has 7 such node(s); at most 3 of them in one "
            "connected part of the fabric (no switch joins leafC, spineA, "
            "spineB and the nodes outside the topology)", refused.stderr)

        trunk = c.submit(script, whole, "-N", "3")
        self.assertEqual(self.nodes_of(c, trunk), ["node1", "node2", "node9"])
        leaf = c.submit(script, whole, "-N", "2")
        self.assertEqual(self.nodes_of(c, leaf), ["node33", "node34"])
        # node17 (spineB) and extra1 are free: two nodes, but not together.
        apart = c.submit(script, whole, "-N", "2")
        wait_for(lambda: c.job(apart)["reason"], 10, "a reason for the job")
        waiting = c.job(apart)
        self.assertEqual((waiting["state"], waiting["reason"]),
                         ("PENDING", "Resources"), waiting)
        # A single node: the listed one first, the unlisted one last.
        c.cli("cancel", str(apart))
        first = c.submit(script, whole, "-N", "1")
        self.assertEqual(self.nodes_of(c, first), ["node17"])
        last = c.submit(script, whole, "-N", "1")
        self.assertEqual(self.nodes_of(c, last), ["extra1"])

        # A 3-node job waits for spineA; a re-import cuts spineA in two, so
        # it can never run: it says so rather than waiting silently.
        queued = c.submit(script, whole, "-N", "3")
        with open(c.path("split.conf"), "w") as f:
            f.write(SPLIT)
        c.cli("topology", "import", "split.conf")
        c.cli("cancel", str(first))  # frees node17: a pass looks again
        wait_for(lambda: c.job(queued)["reason"] == "PartitionNodeLimit", 10,
                 "the queued job to be found never to fit")
        job = c.job(queued)
        self.assertEqual((job["state"], job["reason"]),
                         ("PENDING", "PartitionNodeLimit"), job)
        self.assertIn("at most 2 of them in one connected part of the fabric",
                      job["reason_detail"], job)
        for job_id in (trunk, leaf, last, queued):
            c.cli("cancel", str(job_id))

    def test_an_elastic_job_does_not_grow_onto_another_part(self):
        c = self.start()
        script = c.write_script("hold.sh", "#!/bin/bash\nsleep 120\n")
        holds = [c.submit(script, "--exclusive", "-w", nodes)
                 for nodes in ("node[1,9]", "node[33-34]", "extra1")]
        for job_id in holds:
            c.wait_job(job_id, "RUNNING")
        # node2 (spineA) and node17 (spineB) are free: the job starts on one
        # of them, and the other cannot join it.
        elastic = c.submit(script, "--exclusive", "--nodes=1-2", "--elastic")
        running = self.nodes_of(c, elastic)
        self.assertIn(running, (["node2"], ["node17"]))
        # A pass (a node freed) looks at growing it: no restart follows.
        c.cli("cancel", str(holds[2]))
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            job = c.job(elastic)
            self.assertEqual((job["state"], job["attempt"]), ("RUNNING", 1),
                             job)
            time.sleep(0.2)
        for job_id in (elastic, holds[0], holds[1]):
            c.cli("cancel", str(job_id))


if __name__ == "__main__":
    main()
