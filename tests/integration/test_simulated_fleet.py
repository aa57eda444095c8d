"""gantry-fleet: one process hosting many virtual nodes against
the real gantryd.

- 50 simulated nodes register (with MUNGE credentials, as real agents),
  named sim00001..sim00050, and show as simulated in `gantry nodes` (JSON,
  -N table, node detail).
- Their ranks are simulated and go through the controller's real paths: a
  multi-node job runs to COMPLETED, a non-zero GANTRY_SIMULATED_EXIT_CODE
  fails the job with that code, a long job is cancelled (its ranks end by
  SIGTERM and free their nodes), a bad GANTRY_SIMULATED_SECONDS fails the
  launch.
- A fleet also serves a controller run with --auth none, and stops promptly
  on SIGTERM.
Every process is stopped by pid (the fleet is one of the cluster's agents).
"""

import os
import signal

import gantry_cluster
from gantry_cluster import ClusterTestCase, expand_hostlist

FLEET_SIZE = 50
NAMES = [f"sim{i:05d}" for i in range(1, FLEET_SIZE + 1)]


def start_fleet(cluster, nodes, *extra):
    """Starts `gantry-fleet --nodes NODES` as the cluster's agent
    "fleet" (so the cluster stops it by pid)."""
    return cluster.start_fleet(nodes, *extra)


def submit(cluster, script, *options, seconds=None, exit_code=None):
    """Submits with the simulated plan in the job's environment."""
    env = {"GANTRY_SIMULATED_SECONDS": seconds,
           "GANTRY_SIMULATED_EXIT_CODE": exit_code}
    saved = dict(cluster.env)
    try:
        for key, value in env.items():
            if value is not None:
                cluster.env[key] = str(value)
        return cluster.submit(script, *options)
    finally:
        cluster.env.clear()
        cluster.env.update(saved)


class SimulatedFleetTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=0)
        start_fleet(cls.cluster, FLEET_SIZE)
        cls.cluster.wait_nodes_up(NAMES, timeout=30)
        cls.script = cls.cluster.write_script(
            "simulated.sh", "#!/bin/bash\necho a simulated rank never runs me\n")

    def test_fifty_nodes_register_and_are_marked_simulated(self):
        nodes = self.cluster.nodes()
        self.assertEqual(sorted(nodes), NAMES)
        for name, node in nodes.items():
            with self.subTest(node=name):
                self.assertEqual(node["state"], "up")
                self.assertIs(node["simulated"], True)
                self.assertEqual(node["cpus"], 32)
                self.assertEqual(len(node["gpus"]), 8)
                self.assertIn("synthetic", node["inventory_source"])
        table = self.cluster.cli("nodes", "-N").stdout.splitlines()
        rows = [line for line in table if line.startswith("sim")]
        self.assertEqual(len(rows), FLEET_SIZE)
        for row in rows:
            self.assertIn("+sim", row.split()[1], row)
        detail = self.cluster.cli("nodes", "sim00007").stdout
        # scontrol show node's record, then Gantry's: simulated says so.
        self.assertRegex(detail, r"^NodeName=sim00007 .*\n(.*\n)*   State=IDLE ")
        self.assertIn(" Simulated=yes", detail)

    def test_multi_node_job_runs_to_completed(self):
        job_id = submit(self.cluster, self.script, "-N", "8",
                        "--ntasks-per-node=2", seconds=0.5)
        job = self.cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["exit_code"], 0)
        self.assertEqual(len(job["rank_exits"]), 16)
        nodes = expand_hostlist(job["nodelist"])
        self.assertEqual(len(nodes), 8)
        self.assertTrue(set(nodes) <= set(NAMES), nodes)
        self.assertEqual([e["kind"] for e in job["history"]],
                         ["submitted", "started", "completed"])

    def test_nonzero_simulated_exit_code_fails_the_job(self):
        job_id = submit(self.cluster, self.script, "-N", "4",
                        "--max-restarts=0", seconds=0.2, exit_code=3)
        job = self.cluster.wait_job(job_id, "FAILED")
        self.assertEqual(job["exit_code"], 3)
        self.assertEqual(job["reason"], "NonZeroExitCode")
        self.assertIn("exited with code 3", job["reason_detail"])

    def test_cancelled_long_job_ends_and_frees_its_nodes(self):
        job_id = submit(self.cluster, self.script, "-N", "10",
                        "--ntasks-per-node=4", seconds="inf")
        job = self.cluster.wait_job(job_id, "RUNNING")
        nodes = expand_hostlist(job["nodelist"])
        self.cluster.cli("cancel", str(job_id))
        job = self.cluster.wait_job(job_id, "CANCELLED")

        def all_ranks_ended():
            exits = self.cluster.job(job_id)["rank_exits"]
            return exits if len(exits) == 40 else None
        exits = gantry_cluster.wait_for(all_ranks_ended, 10, "40 rank exits")
        self.assertEqual({e["signal"] for e in exits}, {signal.SIGTERM})

        def freed():
            current = self.cluster.nodes()
            return all(current[n]["cpus_allocated"] == 0 for n in nodes)
        gantry_cluster.wait_for(freed, 10, f"nodes {nodes} free again")

    def test_bad_simulated_seconds_fails_the_launch(self):
        job_id = submit(self.cluster, self.script, "-N", "2",
                        "--max-restarts=0", seconds="soon")
        job = self.cluster.wait_job(job_id, "FAILED")
        self.assertIn("could not start", job["reason_detail"])
        self.assertIn("GANTRY_SIMULATED_SECONDS", job["reason_detail"])


class SimulatedFleetWithoutAuthTest(ClusterTestCase):

    def test_fleet_serves_auth_none_and_stops_on_sigterm(self):
        cluster = self.start_cluster(agents=0, auth="none")
        fleet = start_fleet(cluster, 5, "--prefix", "open-",
                            "--first", "7")
        names = [f"open-{i:05d}" for i in range(7, 12)]
        nodes = cluster.wait_nodes_up(names, timeout=20)
        self.assertTrue(all(nodes[n]["simulated"] for n in names))
        fleet.send(signal.SIGTERM)
        self.assertEqual(fleet.process.wait(timeout=5), 0)
        self.assertIn("simulated fleet stopped", fleet.log_text())


if __name__ == "__main__":
    gantry_cluster.main()
