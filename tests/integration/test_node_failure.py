#!/usr/bin/env python3
"""An agent killed with SIGKILL (its node "crashed"): the node goes down
after --node-timeout, the jobs with ranks there end NODE_FAIL and their
ranks elsewhere are stopped, other jobs carry on, and a restarted agent
cleans up what its previous process left running."""

import signal
import time

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

    def test_frozen_agent_that_comes_back_has_its_stale_ranks_stopped(self):
        # SIGSTOP stands for a network partition: the agent and the
        # controller cannot hear each other, the ranks keep running.
        cluster = self.start_cluster(agents=2, node_timeout=NODE_TIMEOUT)
        job_id, pids = self.start_two_node_job(cluster)
        cluster.signal_agent("node02", signal.SIGSTOP)
        try:
            cluster.wait_job(job_id, "NODE_FAIL", timeout=NODE_TIMEOUT + 8)
            self.assertEqual(cluster.nodes()["node02"]["state"], "down")
            self.assert_pids_gone([pids["node01"]], timeout=8, what="the rank on node01")
            self.assertTrue(pid_alive(pids["node02"]), "the partitioned rank runs on")
        finally:
            cluster.signal_agent("node02", signal.SIGCONT)
        # Back in touch, the agent reports a rank of a job that is over.
        cluster.wait_nodes_up(["node02"])
        self.assert_pids_gone([pids["node02"]], timeout=8, what="the stale rank on node02")
        self.assertEqual(cluster.job(job_id)["state"], "NODE_FAIL")

    def test_second_agent_claiming_a_registered_node_name_does_not_disturb_it(self):
        # A misconfigured (or hostile) second agent says it is node01. The
        # node01 that is alive and running a job must keep it; today the
        # two take the name from each other in a loop, and each time the
        # newcomer "no longer runs" node01's ranks, so the job is failed.
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("hold.sh", "#!/bin/bash\n" + WAIT_FOR_FILE +
                                      "wait_for_file release\n")
        job_id = cluster.submit(script)
        cluster.wait_job(job_id, "RUNNING")
        address = cluster.nodes()["node01"]["address"]

        cluster.start_agent("impostor", node_name="node01")
        time.sleep(2)  # long enough for each agent to register several times
        job = cluster.job(job_id)
        self.assertEqual(job["state"], "RUNNING", job["reason_detail"])
        self.assertEqual(cluster.nodes()["node01"]["address"], address)
        cluster.touch("release")
        cluster.wait_job(job_id, "COMPLETED")

    def test_controller_stall_longer_than_node_timeout_does_not_fail_healthy_nodes(self):
        # gantryd itself stops for longer than --node-timeout (a slow fsync,
        # a paused VM). The agents were fine; what went unheard is the
        # controller's own absence, so on resuming it must give them
        # --node-timeout to be heard from again before judging them.
        # The agents are frozen too and resumed 0.2 s after gantryd, which
        # makes the order deterministic: with only gantryd frozen, its timer
        # races the queued heartbeats, and the job failed in 3 of 11 tries.
        cluster = self.start_cluster(agents=2, node_timeout=1.0)
        job_id, pids = self.start_two_node_job(cluster)
        everyone = [cluster.controller] + list(cluster.agents.values())
        for daemon in everyone:
            daemon.send(signal.SIGSTOP)
        try:
            time.sleep(2.5)
        finally:
            cluster.controller.send(signal.SIGCONT)
            time.sleep(0.2)
            for daemon in everyone[1:]:
                daemon.send(signal.SIGCONT)
        time.sleep(1.5)  # well over a node timeout of normal heartbeats
        job = cluster.job(job_id)
        self.assertEqual(job["state"], "RUNNING", job["reason_detail"])
        self.assertEqual({n["state"] for n in cluster.nodes().values()}, {"up"})
        self.assertTrue(all(pid_alive(p) for p in pids.values()))
        cluster.touch("release")
        cluster.wait_job(job_id, "COMPLETED")


if __name__ == "__main__":
    gantry_cluster.main()
