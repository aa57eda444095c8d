#!/usr/bin/env python3
"""Nodes that fail under jobs: an agent killed with SIGKILL (the node
"crashed") or frozen (a partition). The node goes down after
--node-timeout and is drained; a job with ranks there ends NODE_FAIL (no
restarts left) or is restarted on healthy nodes, and its ranks elsewhere
are stopped; other jobs carry on. And what must not count as a node
failure: a second agent using a taken name, a stall of gantryd itself."""

import os
import signal
import time

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, pid_alive, wait_for

NODE_TIMEOUT = 2.0

# Records the rank's pid and node, then waits (for `release`, at most a
# minute).
PID_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo "$$ $SLURMD_NODENAME" > "pid.$SLURM_JOB_ID.$SLURM_PROCID"
wait_for_file release
"""


class NodeFailureTest(ClusterTestCase):

    def start_two_node_job(self, cluster, *options):
        """A job with one rank on node01 and one on node02; returns its id
        and {node: rank pid}."""
        script = cluster.write_script("pid.sh", PID_SCRIPT)
        job_id = cluster.submit(script, "-N", "2", *options)
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
        # No restarts: the node failure is final for the job.
        job_id, pids = self.start_two_node_job(cluster, "--max-restarts=0")

        cluster.kill_agent("node02")
        nodes = cluster.wait_nodes(["node02"], "down", timeout=NODE_TIMEOUT + 8)
        self.assertNotEqual(nodes["node02"]["reason"], "")
        # It died under a job: suspect until an admin resumes it.
        self.assertTrue(nodes["node02"]["drained"])
        self.assertEqual(nodes["node01"]["state"], "up")
        self.assertFalse(nodes["node01"]["drained"])
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

    def test_ranks_of_a_killed_agent_die_with_it_children_included(self):
        cluster = self.start_cluster(agents=2, node_timeout=NODE_TIMEOUT)
        script = cluster.write_script("family.sh", """#!/bin/bash
sleep 60 &
echo $! > "child.$SLURM_JOB_ID.$SLURMD_NODENAME"
echo $$ > "rank.$SLURM_JOB_ID.$SLURMD_NODENAME"
wait
""")
        job_id = cluster.submit(script, "-N", "2", "--max-restarts=0")
        pids = cluster.wait_files([f"rank.{job_id}.node02", f"child.{job_id}.node02"])
        cluster.kill_agent("node02")
        # The rank itself dies with its agent (PR_SET_PDEATHSIG) ...
        self.assert_pids_gone([int(pids[f"rank.{job_id}.node02"])], timeout=5,
                              what="the rank of the dead agent")
        # ... and what it started is killed by the agent's next start (under
        # systemd, which restarts the agent, at once: see docs/user-guide.md, "Ranks die
        # with their agent"), found by its process group. Nothing runs on
        # unwatched past that.
        cluster.start_agent("node02")
        # The bound covers the agent's start too, which takes seconds under
        # the sanitizer tier's ASan build on a busy machine.
        self.assert_pids_gone([int(pids[f"child.{job_id}.node02"])],
                              timeout=15,
                              what="the child of the dead agent's rank")

    def test_failed_node_comes_back_drained_and_takes_work_once_resumed(self):
        cluster = self.start_cluster(agents=2, node_timeout=NODE_TIMEOUT)
        job_id, _ = self.start_two_node_job(cluster, "--max-restarts=0")
        # Silent past the node timeout: the node failed (an agent restarted
        # in time is our own crash instead, see below).
        cluster.kill_agent("node02")
        cluster.wait_job(job_id, "NODE_FAIL", timeout=NODE_TIMEOUT + 8)
        cluster.start_agent("node02")
        node = cluster.wait_nodes_up(["node02"])["node02"]
        self.assertTrue(node["drained"], "back, but drained until an admin says so")
        follow_up = cluster.write_script("true.sh", "#!/bin/bash\ntrue\n")
        waiting = cluster.submit(follow_up, "-N", "2")
        time.sleep(0.5)  # the scheduler runs as soon as a job arrives
        self.assertEqual(cluster.job(waiting)["state"], "PENDING")
        cluster.cli("resume", "node02")
        self.assertFalse(cluster.nodes()["node02"]["drained"])
        cluster.wait_job(waiting, "COMPLETED")

    def test_node_failure_spares_jobs_without_ranks_on_that_node(self):
        cluster = self.start_cluster(agents=2, node_timeout=NODE_TIMEOUT)
        script = cluster.write_script("pid.sh", PID_SCRIPT)
        bystander = cluster.submit(script, "-N", "1")
        by_job = cluster.wait_job(bystander, "RUNNING")
        self.assertEqual(by_job["nodelist"], "node01",
                         "precondition: the first node is filled first")
        victim, _ = self.start_two_node_job(cluster, "--max-restarts=0")

        cluster.kill_agent("node02")
        cluster.wait_job(victim, "NODE_FAIL", timeout=NODE_TIMEOUT + 8)
        self.assertEqual(cluster.job(bystander)["state"], "RUNNING")
        self.assertEqual(cluster.job(bystander)["attempt"], 1)
        cluster.touch("release")
        cluster.wait_job(bystander, "COMPLETED")

    def test_job_hit_by_a_node_fault_restarts_on_healthy_nodes(self):
        cluster = self.start_cluster(agents=3, node_timeout=NODE_TIMEOUT)
        script = cluster.write_script("attempt.sh", """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo "$SLURMD_NODENAME restarts=$GANTRY_RESTART_COUNT" \\
  >> "ran.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$SLURM_PROCID"
wait_for_file release
""")
        job_id = cluster.submit(script, "-N", "2")
        self.assertEqual(cluster.wait_job(job_id, "RUNNING")["nodelist"], "node[01-02]")
        cluster.wait_files([f"ran.{job_id}.1.0", f"ran.{job_id}.1.1"])

        cluster.kill_agent("node02")
        second = cluster.wait_files([f"ran.{job_id}.2.0", f"ran.{job_id}.2.1"],
                                    timeout=NODE_TIMEOUT + 15)
        job = cluster.wait_job(job_id, "RUNNING")
        self.assertEqual(job["attempt"], 2)
        self.assertEqual(expand(job["nodelist"]), ["node01", "node03"],
                         "the new attempt avoids the failed node")
        self.assertEqual(sorted(second.values()),
                         ["node01 restarts=1", "node03 restarts=1"])
        cluster.touch("release")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertIn("requeued", [e["kind"] for e in job["history"]])
        # Each rank ran once per attempt, and there were two attempts.
        for attempt in (1, 2):
            for rank in (0, 1):
                lines = cluster.read(f"ran.{job_id}.{attempt}.{rank}").splitlines()
                self.assertEqual(len(lines), 1, f"attempt {attempt} rank {rank}: {lines}")

    def test_survivors_save_on_sigterm_and_the_restart_resumes_from_it(self):
        # Just-in-time checkpointing: after a node fault the surviving ranks
        # get SIGTERM and the kill grace; a rank that saves its state then
        # and reports it (gantry checkpoint) gives the restart that state,
        # not the last periodic checkpoint. The restart waits for them.
        cluster = self.start_cluster(agents=3, node_timeout=NODE_TIMEOUT,
                                     kill_grace=10)
        os.makedirs(cluster.path("ck"), exist_ok=True)
        script = cluster.write_script("jit.sh", f"""#!/bin/bash
save() {{
  sleep 1  # a save takes a while: the restart must wait for it
  mkdir -p "$GANTRY_CHECKPOINT_DIR/jit.$SLURM_PROCID"
  {cluster.cli_bin} checkpoint "$GANTRY_CHECKPOINT_DIR/jit.$SLURM_PROCID" \
    --step 77 || echo "report refused" >> "refused.$SLURM_PROCID"
  exit 0
}}
echo "$GANTRY_ATTEMPT $SLURMD_NODENAME $GANTRY_RESUME_FROM $GANTRY_RESUME_STEP" \
  > "ran.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$SLURM_PROCID"
if [ "$GANTRY_ATTEMPT" = 1 ]; then
  mkdir -p "$GANTRY_CHECKPOINT_DIR/periodic"
  {cluster.cli_bin} checkpoint "$GANTRY_CHECKPOINT_DIR/periodic" --step 10
  trap save TERM
fi
sleep 60 & wait
""")
        job_id = cluster.submit(script, "-N", "2", "--checkpoint-dir", "ck",
                                "--max-restarts=3")
        self.assertEqual(cluster.wait_job(job_id, "RUNNING")["nodelist"],
                         "node[01-02]")
        cluster.wait_files([f"ran.{job_id}.1.0", f"ran.{job_id}.1.1"])
        wait_for(lambda: cluster.job(job_id)["latest_checkpoint"]["step"] == 10,
                 10, "the periodic checkpoint")
        time.sleep(2)  # work after the periodic checkpoint

        cluster.kill_agent("node02")
        second = cluster.wait_files([f"ran.{job_id}.2.0", f"ran.{job_id}.2.1"],
                                    timeout=NODE_TIMEOUT + 15)
        saved = cluster.path("ck", "jit.0")  # rank 0 survived on node01
        self.assertFalse(os.path.exists(cluster.path("refused.0")))
        job = cluster.job(job_id)
        self.assertEqual(job["latest_checkpoint"]["path"], saved)
        self.assertEqual(job["attempts"][1]["resumed_from"], saved)
        for text in second.values():
            self.assertEqual(text.split()[2:], [saved, "77"], text)
        # The state saved at the fault loses none of the work since the
        # periodic checkpoint.
        goodput = cluster.job(job_id)["goodput"]
        self.assertLess(goodput["lost_seconds"], 0.5, goodput)
        cluster.cli("cancel", str(job_id))

    def test_agent_restarted_before_the_timeout_restarts_the_job_uncharged(self):
        # A long timeout: what happens must come from the agent's report on
        # re-registering (a new agent process that runs none of the job's
        # ranks), not from a timer. The agent's crash is ours, not the
        # node's or the job's: the job restarts without spending its budget
        # (none here) and the node stays in service.
        cluster = self.start_cluster(agents=2, node_timeout=60)
        job_id, pids = self.start_two_node_job(cluster, "--max-restarts=0")
        cluster.kill_agent("node02")
        cluster.start_agent("node02")
        wait_for(lambda: cluster.job(job_id)["attempt"] == 2, 10,
                 "the job's second attempt")
        job = cluster.wait_job(job_id, "RUNNING")
        self.assertEqual(job["uncharged_attempts"], 1)
        self.assertIn("node02 restarted and lost rank",
                      job["attempts"][0]["end_detail"])
        self.assert_pids_gone(list(pids.values()), timeout=8, what="both ranks")
        node = cluster.nodes()["node02"]
        self.assertEqual(node["state"], "up")
        self.assertFalse(node["drained"])
        cluster.touch("release")
        cluster.wait_job(job_id, "COMPLETED")

    def test_frozen_agent_that_comes_back_has_its_stale_ranks_stopped(self):
        # SIGSTOP stands for a network partition: the agent and the
        # controller cannot hear each other, the ranks keep running.
        cluster = self.start_cluster(agents=2, node_timeout=NODE_TIMEOUT)
        job_id, pids = self.start_two_node_job(cluster, "--max-restarts=0")
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
        # newcomer "lost" node01's ranks, so the job fails and the node is
        # drained.
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("hold.sh", "#!/bin/bash\n" + WAIT_FOR_FILE +
                                      "wait_for_file release\n")
        job_id = cluster.submit(script)
        cluster.wait_job(job_id, "RUNNING")
        address = cluster.nodes()["node01"]["address"]

        cluster.start_agent("impostor", node_name="node01")
        time.sleep(2)  # long enough for each agent to register several times
        job = cluster.job(job_id)
        self.assertEqual((job["state"], job["attempt"]), ("RUNNING", 1),
                         job["reason_detail"])
        node = cluster.nodes()["node01"]
        self.assertEqual(node["address"], address)
        self.assertFalse(node["drained"], node["drain_reason"])
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
        self.assertEqual((job["state"], job["attempt"]), ("RUNNING", 1),
                         job["reason_detail"])
        for name, node in cluster.nodes().items():
            self.assertEqual((node["state"], node["drained"]), ("up", False), name)
        self.assertTrue(all(pid_alive(p) for p in pids.values()))
        cluster.touch("release")
        cluster.wait_job(job_id, "COMPLETED")


def expand(hostlist):
    return sorted(gantry_cluster.expand_hostlist(hostlist))


if __name__ == "__main__":
    gantry_cluster.main()
