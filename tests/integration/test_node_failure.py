#!/usr/bin/env python3
"""An agent killed with SIGKILL (its node "crashed"): the node goes down
after --node-timeout, the jobs with ranks there end NODE_FAIL and their
ranks elsewhere are stopped, other jobs carry on, and a restarted agent
cleans up what its previous process left running."""

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, pid_alive

NODE_TIMEOUT = 2.0

# Records the rank's pid and node, then waits (for `release`, at most a
# minute).
PID_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo "$$ $SLURMD_NODENAME" > "pid.$SLURM_JOB_ID.$SLURM_PROCID"
wait_for_file release
"""


class NodeFailureTest(ClusterTestCase):

    def start_two_node_job(self, cluster):
        """A job with one rank on node01 and one on node02; returns its id
        and {node: rank pid}."""
        script = cluster.write_script("pid.sh", PID_SCRIPT)
        job_id = cluster.submit(script, "-N", "2")
        cluster.wait_job(job_id, "RUNNING")
        files = cluster.wait_files([f"pid.{job_id}.0", f"pid.{job_id}.1"])
        pids = {}
        for text in files.values():
            pid, node = text.split()
            pids[node] = int(pid)
        self.assertEqual(sorted(pids), ["node01", "node02"])
        return job_id, pids

    def test_killed_agent_takes_its_node_down_and_the_job_to_node_fail(self):
        cluster = self.start_cluster(agents=2, node_timeout=NODE_TIMEOUT)
        job_id, pids = self.start_two_node_job(cluster)

        cluster.kill_agent("node02")
        nodes = cluster.wait_nodes(["node02"], "down", timeout=NODE_TIMEOUT + 8)
        self.assertNotEqual(nodes["node02"]["reason"], "")
        self.assertEqual(nodes["node01"]["state"], "up")
        job = cluster.wait_job(job_id, "NODE_FAIL", timeout=5)
        self.assertEqual(job["reason"], "NodeFail")
        self.assertIn("node02", job["reason_detail"])
        # The surviving rank must not keep the gang's other half running.
        self.assert_pids_gone([pids["node01"]], timeout=8, what="the rank on node01")
        # node01 is free again: a job can use all of it.
        cpus = nodes["node01"]["cpus"]
        follow_up = cluster.write_script("true.sh", "#!/bin/bash\ntrue\n")
        job = cluster.wait_job(cluster.submit(follow_up, f"--ntasks-per-node={cpus}"),
                               "COMPLETED")
        self.assertEqual(job["nodelist"], "node01")

    def test_node_failure_spares_jobs_without_ranks_on_that_node(self):
        cluster = self.start_cluster(agents=2, node_timeout=NODE_TIMEOUT)
        script = cluster.write_script("pid.sh", PID_SCRIPT)
        bystander = cluster.submit(script, "-N", "1")
        by_job = cluster.wait_job(bystander, "RUNNING")
        self.assertEqual(by_job["nodelist"], "node01",
                         "precondition: the first node is filled first")
        victim, _ = self.start_two_node_job(cluster)

        cluster.kill_agent("node02")
        cluster.wait_job(victim, "NODE_FAIL", timeout=NODE_TIMEOUT + 8)
        self.assertEqual(cluster.job(bystander)["state"], "RUNNING")
        cluster.touch("release")
        cluster.wait_job(bystander, "COMPLETED")

    def test_restarted_agent_kills_ranks_left_by_its_previous_process(self):
        cluster = self.start_cluster(agents=2, node_timeout=NODE_TIMEOUT)
        job_id, pids = self.start_two_node_job(cluster)
        cluster.kill_agent("node02")
        cluster.wait_job(job_id, "NODE_FAIL", timeout=NODE_TIMEOUT + 8)
        # Nobody was left to stop the rank on node02.
        self.assertTrue(pid_alive(pids["node02"]))

        cluster.start_agent("node02")
        cluster.wait_nodes_up(["node02"])
        self.assert_pids_gone([pids["node02"]], timeout=5, what="the orphaned rank")
        # And the node is usable again.
        follow_up = cluster.write_script("true.sh", "#!/bin/bash\ntrue\n")
        cluster.wait_job(cluster.submit(follow_up, "-N", "2"), "COMPLETED")

    def test_agent_restarted_before_the_timeout_reports_the_lost_ranks(self):
        # A long timeout: the failure must come from the agent's report on
        # re-registering (it runs none of the job's ranks), not from a timer.
        cluster = self.start_cluster(agents=2, node_timeout=60)
        job_id, pids = self.start_two_node_job(cluster)
        cluster.kill_agent("node02")
        cluster.start_agent("node02")
        job = cluster.wait_job(job_id, "NODE_FAIL", timeout=10)
        self.assertIn("node02", job["reason_detail"])
        self.assert_pids_gone(list(pids.values()), timeout=8, what="both ranks")
        self.assertEqual(cluster.nodes()["node02"]["state"], "up")


if __name__ == "__main__":
    gantry_cluster.main()
