#!/usr/bin/env python3
"""Stopping jobs: cancel in each state, and the time limit. A stopped job's
processes must really be gone (checked by the pids its ranks write), and its
nodes must be free for the next job."""

import os

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, pid_alive

# Each rank records its own pid and its child's, then waits on the child.
# With IGNORE_TERM=1 in the job's environment both ignore SIGTERM, so only
# the SIGKILL that follows --kill-grace stops them.
SLEEPER_SCRIPT = """#!/bin/bash
[ "$IGNORE_TERM" = 1 ] && trap '' TERM
sleep 60 &
echo $! > "pid.$SLURM_JOB_ID.$SLURM_PROCID.child"
echo $$ > "pid.$SLURM_JOB_ID.$SLURM_PROCID.script"
wait
"""


def pid_files(job_id, ranks):
    return [f"pid.{job_id}.{r}.{kind}" for r in range(ranks)
            for kind in ("script", "child")]


class CancelTest(ClusterTestCase):

    def wait_nodes_idle(self, cluster):
        gantry_cluster.wait_for(
            lambda: all(n["cpus_allocated"] == 0 for n in cluster.nodes().values()),
            10, "every node to have no CPUs allocated")

    def test_cancel_pending_job_ends_it_before_it_ever_runs(self):
        cluster = self.start_cluster(agents=1)
        cpus = cluster.nodes()["node01"]["cpus"]
        blocker_script = cluster.write_script(
            "blocker.sh", "#!/bin/bash\n" + WAIT_FOR_FILE + "wait_for_file release\n")
        blocker = cluster.submit(blocker_script, f"--ntasks-per-node={cpus}")
        cluster.wait_job(blocker, "RUNNING")
        marker_script = cluster.write_script(
            "marker.sh", "#!/bin/bash\ntouch ran.$SLURM_JOB_ID\n")
        pending = cluster.submit(marker_script)
        cluster.wait_job(pending, "PENDING")

        cluster.cli("cancel", str(pending))
        job = cluster.wait_job(pending, "CANCELLED")
        self.assertEqual(job["reason"], "Cancelled")
        self.assertEqual(job["start_time"], "Unknown")
        # Freeing the node must not start the cancelled job.
        cluster.touch("release")
        cluster.wait_job(blocker, "COMPLETED")
        after = cluster.submit(marker_script)
        cluster.wait_job(after, "COMPLETED")
        self.assertTrue(os.path.exists(cluster.path(f"ran.{after}")))
        self.assertFalse(os.path.exists(cluster.path(f"ran.{pending}")))
        self.assertEqual(cluster.job(pending)["state"], "CANCELLED")

    def test_cancel_running_job_kills_every_rank_and_child_and_frees_the_nodes(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("sleeper.sh", SLEEPER_SCRIPT)
        job_id = cluster.submit(script, "-N", "2", "--ntasks-per-node=2")
        pids = cluster.wait_files(pid_files(job_id, 4))
        cluster.wait_job(job_id, "RUNNING")
        for name, pid in pids.items():
            self.assertTrue(pid_alive(int(pid)), f"{name} ({pid}) runs before the cancel")

        cluster.cli("cancel", str(job_id))
        job = cluster.wait_job(job_id, "CANCELLED")
        self.assertEqual(job["reason"], "Cancelled")
        self.assert_pids_gone([int(p) for p in pids.values()], timeout=10,
                              what="ranks and their children")
        self.wait_nodes_idle(cluster)
        # The freed nodes take a new two-node job.
        follow_up = cluster.write_script("true.sh", "#!/bin/bash\ntrue\n")
        cluster.wait_job(cluster.submit(follow_up, "-N", "2", "--ntasks-per-node=2"),
                         "COMPLETED")

    def test_ranks_that_ignore_sigterm_are_killed_after_the_kill_grace(self):
        cluster = self.start_cluster(agents=1, kill_grace=1)
        script = cluster.write_script("sleeper.sh", SLEEPER_SCRIPT)
        cluster.env["IGNORE_TERM"] = "1"
        job_id = cluster.submit(script, "--ntasks-per-node=2")
        pids = cluster.wait_files(pid_files(job_id, 2))
        cluster.cli("cancel", str(job_id))
        cluster.wait_job(job_id, "CANCELLED")
        self.assert_pids_gone([int(p) for p in pids.values()], timeout=8,
                              what="ranks ignoring SIGTERM")
        self.wait_nodes_idle(cluster)

    def test_cancel_finished_job_is_an_error_and_changes_nothing(self):
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("true.sh", "#!/bin/bash\ntrue\n")
        job_id = cluster.submit(script)
        before = cluster.wait_job(job_id, "COMPLETED")
        result = cluster.cli("cancel", str(job_id), check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(f"job id {job_id}", result.stderr)
        self.assertIn("already finished (COMPLETED)", result.stderr)
        after = cluster.job(job_id)
        self.assertEqual(after["state"], "COMPLETED")
        self.assertEqual(after["history"], before["history"])
        # A second cancel of a cancelled job is an error too.
        blocker = cluster.write_script(
            "wait.sh", "#!/bin/bash\n" + WAIT_FOR_FILE + "wait_for_file never\n")
        cancelled = cluster.submit(blocker)
        cluster.cli("cancel", str(cancelled))
        cluster.wait_job(cancelled, "CANCELLED")
        again = cluster.cli("cancel", str(cancelled), check=False)
        self.assertNotEqual(again.returncode, 0)
        self.assertIn("already finished (CANCELLED)", again.stderr)

    def test_cancel_of_several_ids_cancels_the_valid_ones_and_reports_the_rest(self):
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script(
            "wait.sh", "#!/bin/bash\n" + WAIT_FOR_FILE + "wait_for_file never\n")
        first = cluster.submit(script)
        second = cluster.submit(script)
        result = cluster.cli("cancel", str(first), "999", str(second), check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("invalid job id 999", result.stderr)
        self.assertNotIn(f"job id {first}:", result.stderr)
        cluster.wait_job(first, "CANCELLED")
        cluster.wait_job(second, "CANCELLED")

    def test_background_processes_left_by_a_completed_rank_are_stopped(self):
        # As in Slurm, a job is over when its script exits: anything it left
        # running in the background is stopped, not left holding a node the
        # scheduler now thinks is free.
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("leaver.sh", """#!/bin/bash
sleep 60 &
echo $! > "pid.$SLURM_JOB_ID.background"
exit 0
""")
        job_id = cluster.submit(script)
        cluster.wait_job(job_id, "COMPLETED")
        background = int(cluster.wait_files([f"pid.{job_id}.background"])
                         [f"pid.{job_id}.background"])
        self.assert_pids_gone([background], timeout=15,
                              what="the background process of the finished job")

    def test_time_limit_ends_the_job_as_timeout_and_kills_its_ranks(self):
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("sleeper.sh", SLEEPER_SCRIPT)
        job_id = cluster.submit(script, "--time=0:02")
        pids = cluster.wait_files(pid_files(job_id, 1))
        job = cluster.wait_job(job_id, "TIMEOUT", timeout=10)
        self.assertEqual(job["reason"], "TimeLimit")
        self.assertEqual(job["time_limit_seconds"], 2)
        self.assert_pids_gone([int(p) for p in pids.values()], timeout=8,
                              what="the timed-out rank")


if __name__ == "__main__":
    gantry_cluster.main()
