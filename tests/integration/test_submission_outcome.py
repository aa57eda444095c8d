#!/usr/bin/env python3
"""A submission whose answer is lost is never reported failed when it may
have succeeded, and is never made twice. gantry batch asks again with the
same submission token when gantryd dies with the call in flight (kill -9
right after the job is stored: the crash point), and prints the job id
gantryd gave that token; every script runs once. A controller frozen
before it was dialled (SIGSTOP) got no request: whatever the CLI says
then is true. The controller is started as the harness starts it
(shipped defaults, MUNGE on)."""

import os
import signal
import subprocess
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase, wait_for

# The CLI's deadline for one call (cli/client/controller_client.h): a freeze
# longer than that used to end in "Batch job submission failed".
CALL_DEADLINE_S = 30


class SubmissionOutcomeTest(ClusterTestCase):

    def start_batch(self, cluster, name):
        """`gantry batch -J NAME` of a script that records each run, started
        in the background."""
        runs = cluster.path("runs")
        script = cluster.write_script(
            f"{name}.sh", f"#!/bin/bash\necho {name} >> {runs}\n")
        return subprocess.Popen(
            [cluster.cli_bin, "batch", "--parsable", "-J", name, script],
            cwd=cluster.work_dir, env=cluster.env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)

    def assert_made_once_and_ran_once(self, cluster, name, batch):
        out, err = batch.communicate(timeout=200)
        self.assertEqual(batch.returncode, 0, err)
        self.assertNotIn("failed", err)
        self.assertIn("asking again with the same submission token", err)
        job_id = int(out.strip())
        jobs = [j["job_id"] for j in cluster.cli_json("queue", "--all")["jobs"]
                if j["name"] == name]
        self.assertEqual(jobs, [job_id], "one job, the one printed")
        cluster.wait_job(job_id, "COMPLETED", timeout=60)
        with open(cluster.path("runs")) as runs:
            self.assertEqual(runs.read().split().count(name), 1)

    def test_a_controller_killed_before_it_answers_is_asked_again(self):
        cluster = self.start_cluster(agents=1)
        cluster.kill_controller()
        cluster.start_controller(
            env={"GANTRY_CRASH_AT": "gantryd.submit.after_commit_before_reply"})
        batch = self.start_batch(cluster, "killed")
        wait_for(lambda: not cluster.controller.running(), 30,
                 "gantryd to die after storing the job")
        time.sleep(1)  # the CLI finds nobody for a while
        self.assertIsNone(batch.poll(), "the CLI gave up on a stored job")
        cluster.start_controller()
        self.assert_made_once_and_ran_once(cluster, "killed", batch)

    def test_a_controller_frozen_from_the_start_is_reported_truthfully(self):
        # Frozen before the CLI dials it, gantryd completes no handshake, so
        # the request is never sent: a plain failure is the truth then. If
        # the CLI says it failed, no job may exist once gantryd wakes; if it
        # says anything else, the job exists once and runs once.
        cluster = self.start_cluster(agents=1)
        cluster.controller.send(signal.SIGSTOP)
        try:
            batch = self.start_batch(cluster, "frozen")
            time.sleep(CALL_DEADLINE_S + 5)
        finally:
            cluster.controller.send(signal.SIGCONT)
        out, err = batch.communicate(timeout=200)
        if batch.returncode == 0:
            job_id = int(out.strip())
            cluster.wait_job(job_id, "COMPLETED", timeout=60)
            with open(cluster.path("runs")) as runs:
                self.assertEqual(runs.read().split().count("frozen"), 1)
            return
        self.assertRegex(err, "submission failed|outcome unknown")
        if "outcome unknown" in err:
            return
        time.sleep(3)
        jobs = [j["job_id"] for j in cluster.cli_json("queue", "--all")["jobs"]
                if j["name"] == "frozen"]
        self.assertEqual(jobs, [], f"reported failed, yet stored: {err}")

    def test_an_unreachable_controller_still_fails_at_once(self):
        # Nothing can have been stored when no connection was ever made:
        # that stays a plain, immediate failure.
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("never.sh", "#!/bin/bash\ntrue\n")
        started = time.monotonic()
        result = subprocess.run(
            [cluster.cli_bin, "batch", script], cwd=cluster.work_dir,
            env={**cluster.env,
                 "GANTRY_CONTROLLER": "unix:" + cluster.path("no.sock")},
            capture_output=True, text=True, timeout=60)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("Batch job submission failed", result.stderr)
        self.assertLess(time.monotonic() - started, 20)


if __name__ == "__main__":
    gantry_cluster.main()
