#!/usr/bin/env python3
"""gantryd killed with SIGKILL and started again on the same state dir and
port: what it acknowledged survives, job ids are never reused, agents
reconnect, running work is neither lost nor started twice, and what
happened while it was down is recorded once it is back."""

import random
import threading

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase

# Each rank logs its start and its end to its own file (one line each), and
# in between waits for `release` to appear.
LOGGING_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo "start rank $SLURM_PROCID attempt $GANTRY_ATTEMPT" >> "ranks.$SLURM_JOB_ID.$SLURM_PROCID"
wait_for_file release || exit 1
echo "end rank $SLURM_PROCID" >> "ranks.$SLURM_JOB_ID.$SLURM_PROCID"
"""


class ControllerRestartTest(ClusterTestCase):

    def test_every_acknowledged_submission_survives_kill_9_and_ids_keep_growing(self):
        # No agents: the jobs just pend, so the loop measures submission only.
        cluster = self.start_cluster(agents=0)
        script = cluster.write_script("job.sh", "#!/bin/bash\ntrue\n")
        acknowledged = []  # ids printed by --parsable (list.append is atomic)
        refused = []  # submissions that failed once gantryd was gone
        stop = threading.Event()

        def submit_forever():
            while not stop.is_set():
                result = cluster.cli("batch", "--parsable", script, check=False)
                if result.returncode == 0:
                    acknowledged.append(int(result.stdout))
                else:
                    refused.append(result.stderr)

        # Several clients at once, so that commits are grouped and some
        # are in flight at the kill.
        submitters = [threading.Thread(target=submit_forever) for _ in range(3)]
        for thread in submitters:
            thread.start()
        try:
            # ~12 s on two cores: submission costs a client process each.
            gantry_cluster.wait_for(lambda: len(acknowledged) >= 200, 60,
                                    "200 acknowledged submissions")
            cluster.kill_controller()
            # Let the clients run into the dead controller for a moment.
            gantry_cluster.wait_for(lambda: len(refused) >= 4, 20,
                                    "submissions to fail while gantryd is down")
        finally:
            stop.set()
            for thread in submitters:
                thread.join()

        self.assertEqual(len(acknowledged), len(set(acknowledged)),
                         "no id was acknowledged twice")
        self.assertTrue(any("cannot reach the controller" in e for e in refused),
                        refused[:3])
        cluster.start_controller()
        listed = {j["job_id"] for j in cluster.cli_json("queue", "-a")["jobs"]}
        lost = sorted(set(acknowledged) - listed)
        self.assertEqual(lost, [], f"{len(lost)} acknowledged job(s) are gone")
        # The queue is the full check; `gantry job` on a sample (the first,
        # the last few acknowledged and some at random) checks the by-id path.
        ordered = sorted(acknowledged)
        sample = set(ordered[:2] + ordered[-5:] + random.sample(ordered, 8))
        for job_id in sorted(sample):
            with self.subTest(job_id=job_id):
                job = cluster.job(job_id)
                self.assertEqual(job["job_id"], job_id)
                self.assertEqual(job["state"], "PENDING")
                self.assertEqual(job["history"][0]["kind"], "submitted")
        new_id = cluster.submit(script)
        self.assertGreater(new_id, max(listed))
        self.assertGreater(cluster.status()["next_job_id"], new_id)

    def test_job_finishing_while_gantryd_is_down_completes_after_restart_without_rerun(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("ranks.sh", LOGGING_SCRIPT)
        job_id = cluster.submit(script, "-N", "2", "--ntasks-per-node=2")
        cluster.wait_job(job_id, "RUNNING")
        rank_files = [f"ranks.{job_id}.{r}" for r in range(4)]
        cluster.wait_files(rank_files)

        cluster.kill_controller()
        cluster.touch("release")
        # Every rank ends while nobody is there to hear it.
        gantry_cluster.wait_for(
            lambda: all("end rank" in cluster.read(f) for f in rank_files),
            15, "all ranks to end")
        cluster.start_controller()

        job = cluster.wait_job(job_id, "COMPLETED", timeout=20)
        self.assertEqual(job["exit_code"], 0)
        self.assertEqual(job["attempt"], 1)
        self.assertEqual(sorted(e["rank"] for e in job["rank_exits"]), [0, 1, 2, 3])
        self.assertEqual([e["kind"] for e in job["history"]],
                         ["submitted", "started", "completed"])
        for r, name in enumerate(rank_files):
            with self.subTest(rank=r):
                self.assertEqual(cluster.read(name).splitlines(),
                                 [f"start rank {r} attempt 1", f"end rank {r}"],
                                 "the rank ran exactly once")
        cluster.wait_nodes_up(["node01", "node02"])
        self.assertTrue(all(n["cpus_allocated"] == 0 for n in cluster.nodes().values()))

    def test_job_running_across_a_restart_keeps_running_and_completes_once(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("ranks.sh", LOGGING_SCRIPT)
        job_id = cluster.submit(script, "-N", "2")
        cluster.wait_job(job_id, "RUNNING")
        rank_files = [f"ranks.{job_id}.{r}" for r in range(2)]
        cluster.wait_files(rank_files)

        cluster.restart_controller()
        cluster.wait_nodes_up(["node01", "node02"])
        job = cluster.job(job_id)
        self.assertEqual(job["state"], "RUNNING", "the agents kept the ranks")
        self.assertEqual(job["rank_exits"], [])
        # The restarted controller still counts the job's CPUs as in use.
        for name, node in cluster.nodes().items():
            self.assertGreater(node["cpus_allocated"], 0, name)

        cluster.touch("release")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["attempt"], 1)
        for r, name in enumerate(rank_files):
            self.assertEqual(cluster.read(name).splitlines(),
                             [f"start rank {r} attempt 1", f"end rank {r}"])

    def test_commands_fail_fast_and_clearly_while_gantryd_is_down(self):
        cluster = self.start_cluster(agents=0)
        cluster.kill_controller()
        script = cluster.write_script("job.sh", "#!/bin/bash\ntrue\n")
        for args in (["queue"], ["job", "1"], ["nodes"], ["status"], ["cancel", "1"],
                     ["batch", script]):
            with self.subTest(command=args[0]):
                result = cluster.cli(*args, check=False, timeout=10)
                self.assertNotEqual(result.returncode, 0)
                self.assertIn("cannot reach the controller", result.stderr)
                self.assertIn(cluster.socket, result.stderr)
                self.assertEqual(result.stdout, "")

    def test_nodes_come_back_up_after_restart_and_take_new_jobs(self):
        cluster = self.start_cluster(agents=3)
        cluster.restart_controller()
        nodes = cluster.wait_nodes_up(["node01", "node02", "node03"])
        for name, node in nodes.items():
            self.assertEqual(node["address"], cluster.addresses[name])
        status = cluster.status()
        self.assertEqual(status["nodes"]["up"], 3)
        self.assertEqual(status["nodes"]["total"], 3)
        script = cluster.write_script("hello.sh", "#!/bin/bash\necho hello $SLURM_PROCID\n")
        job_id = cluster.submit(script, "-N", "3")
        cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(sorted(cluster.read(f"gantry-{job_id}.out").splitlines()),
                         ["hello 0", "hello 1", "hello 2"])

    def test_pending_job_survives_restart_and_runs_when_nodes_return(self):
        cluster = self.start_cluster(agents=2, node_timeout=1.0)
        script = cluster.write_script("hello.sh", "#!/bin/bash\necho hello\n")
        # Two nodes wanted, one up (the other known but down, so the job
        # is not refused as bigger than the cluster): it pends across the
        # restart.
        cluster.kill_agent("node02")
        cluster.wait_nodes(["node02"], "down")
        job_id = cluster.submit(script, "-N", "2")
        cluster.wait_job(job_id, "PENDING")
        cluster.restart_controller()
        self.assertEqual(cluster.job(job_id)["state"], "PENDING")
        cluster.start_agent("node02")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["nodelist"], "node[01-02]")

    def test_node_that_does_not_reconnect_is_down_after_the_grace_and_its_job_node_fail(self):
        cluster = self.start_cluster(agents=2, reconnect_grace=2)
        script = cluster.write_script("ranks.sh", LOGGING_SCRIPT)
        job_id = cluster.submit(script, "-N", "2", "--max-restarts=0")
        cluster.wait_job(job_id, "RUNNING")
        cluster.wait_files([f"ranks.{job_id}.{r}" for r in range(2)])
        cluster.kill_controller()
        cluster.kill_agent("node02")
        cluster.start_controller()
        job = cluster.wait_job(job_id, "NODE_FAIL", timeout=15)
        self.assertIn("node02", job["reason_detail"])
        nodes = cluster.nodes()
        self.assertEqual(nodes["node02"]["state"], "down")
        self.assertNotEqual(nodes["node02"]["reason"], "")
        self.assertEqual(nodes["node01"]["state"], "up")


if __name__ == "__main__":
    gantry_cluster.main()
