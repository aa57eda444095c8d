#!/usr/bin/env python3
"""Queue policy on a real two-node cluster: EASY backfill (a blocked big job
keeps its reservation; a short small job backfills, a long one does not),
pending reasons in `gantry queue --json`, --exclusive, the time limit
ending a backfilled job as TIMEOUT, and jobs that can never fit refused at
submit."""

import subprocess

import gantry_cluster
from gantry_cluster import ClusterTestCase

SLEEPER = """#!/bin/bash
sleep 300
"""


class SchedulerPolicyTest(ClusterTestCase):

    def queue_reasons(self, cluster):
        jobs = cluster.cli_json("queue")
        if isinstance(jobs, dict):
            jobs = jobs.get("jobs", [])
        return {job["job_id"]: (job["state"], job.get("reason", ""))
                for job in jobs}

    def test_backfill_keeps_the_reservation_of_the_blocked_job(self):
        cluster = self.start_cluster(agents=2)
        cluster.wait_nodes_up([cluster.node_name(1), cluster.node_name(2)])
        script = cluster.write_script("sleeper.sh", SLEEPER)
        # A holds one node whole for 90 s (its expected end; far beyond what
        # the steps below take even on a loaded machine).
        a = cluster.submit(script, "--exclusive", "--time=1:30")
        cluster.wait_job(a, "RUNNING")
        # B needs both nodes: blocked, with both reserved from A's end.
        b = cluster.submit(script, "-N", "2", "--exclusive", "--time=1:00")
        # D would run past the reservation: it must not take the free node.
        d = cluster.submit(script, "--exclusive", "--time=10:00")
        gantry_cluster.wait_for(
            lambda: cluster.job(d)["reason"] == "Priority", 10,
            "the long job to wait with reason Priority")
        self.assertEqual(cluster.job(b)["reason"], "Resources")
        # C ends (time limit 3 s) long before the reservation: backfilled.
        c = cluster.submit(script, "--exclusive", "--time=0:03")
        cluster.wait_job(c, "RUNNING")

        # Once C holds the free node, D waits for resources as well.
        reasons = self.queue_reasons(cluster)
        self.assertEqual(reasons[a][0], "RUNNING")
        self.assertEqual(reasons[b], ("PENDING", "Resources"), reasons)
        self.assertEqual(reasons[d][0], "PENDING", reasons)
        self.assertIn(reasons[d][1], ("Priority", "Resources"), reasons)
        self.assertIn("reserved", cluster.job(b)["reason_detail"])

        # C's time limit ends it as TIMEOUT; D still may not start.
        job = cluster.wait_job(c, "TIMEOUT", timeout=15)
        self.assertEqual(job["reason"], "TimeLimit")
        self.assertEqual(cluster.job(d)["state"], "PENDING")

        # When A goes, B (not D) gets both nodes.
        cluster.cli("cancel", str(a))
        cluster.wait_job(b, "RUNNING", timeout=20)
        self.assertEqual(len(cluster.job(b)["allocation"]), 2)
        self.assertEqual(cluster.job(d)["state"], "PENDING")
        cluster.cli("cancel", str(b), str(d))

    def test_a_job_that_can_never_fit_is_refused_at_submit(self):
        cluster = self.start_cluster(agents=2)
        cluster.wait_nodes_up([cluster.node_name(1), cluster.node_name(2)])
        script = cluster.write_script("sleeper.sh", SLEEPER)
        for options, words in ((["-N", "3"], ["3 node(s)", "has 2"]),
                               (["--gpus-per-node=64"], ["--gpus-per-node=64"])):
            with self.subTest(options=options):
                result = cluster.cli("batch", *options, script, check=False)
                self.assertNotEqual(result.returncode, 0, result.stdout)
                for word in words:
                    self.assertIn(word, result.stderr)
        self.assertEqual(self.queue_reasons(cluster), {})


if __name__ == "__main__":
    gantry_cluster.main()
