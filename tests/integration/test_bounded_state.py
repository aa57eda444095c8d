#!/usr/bin/env python3
"""Bounded controller state (issue #18): one user cannot lock everyone out,
and nobody sees another user's payloads.

- A submission is refused, naming the limit, when what it would store
  (every array task's script and arguments) is over it; nothing is stored.
- With hundreds of MiB of allowed job arguments stored, `gantry queue`,
  `gantry hold`/`release` and `gantry cancel -u` still work: listings are
  summaries in pages, and cancel/hold are resolved by the controller.
- Another user sees no script arguments or step command lines of a job,
  through the raw ListJobs and GetJob calls (gantry-api-probe) or the CLI.
- A finished job leaves the live state after --min-job-age (so `gantry
  queue --all` no longer lists it) and `gantry job ID` still shows it from
  the history, also after a restart.
"""

import json
import os
import pwd
import secrets
import subprocess
import time
import unittest

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, wait_for

# 15 arguments of 100 KiB (under the kernel's 128 KiB per argument, so the
# CLI itself can be started with them): 1.5 MiB of arguments per task.
BIG_ARGS = tuple("a" * (100 << 10) for _ in range(15))
SECRET_ARG = "s3cret-arg-7f2c"
SECRET_STEP = "s3cret-step-91ab"


def run(*argv):
    subprocess.run(argv, check=True, capture_output=True, text=True)


class BoundedStateTest(ClusterTestCase):

    def probe(self, cluster, *args, uid=None):
        """gantry-api-probe on the cluster's socket, as `uid`; the parsed
        JSON it prints."""
        binary = os.path.join(gantry_cluster.build_dir(), "tests", "tools",
                              "gantry-api-probe")
        identity = {}
        if uid is not None:
            entry = pwd.getpwuid(uid)
            identity = {"user": uid, "group": entry.pw_gid,
                        "extra_groups": []}
        result = subprocess.run([binary, "unix:" + cluster.socket, *args],
                                env=cluster.env, capture_output=True,
                                text=True, timeout=60, **identity)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return json.loads(result.stdout)

    def test_oversized_array_is_refused_and_stores_nothing(self):
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("job.sh", "#!/bin/bash\ntrue\n")
        # 50 tasks of 1.5 MiB: 75 MiB, over the 64 MiB of a submission.
        result = cluster.cli("batch", "--parsable", "--hold", "--array=0-49",
                             script, *BIG_ARGS, check=False)
        self.assertNotEqual(result.returncode, 0, result.stdout)
        self.assertIn("the limit per submission is 64 MiB", result.stderr)
        self.assertIn("50 task(s)", result.stderr)
        self.assertEqual(cluster.cli("queue", "--all", "-h").stdout, "")
        # Nothing stored, not even an id: the next job is the first.
        job_id = cluster.submit(script, "--hold")
        self.assertEqual(job_id, 1)
        # The same arguments in a smaller array are fine.
        array_id = cluster.submit(script, "--hold", "--array=0-9",
                                  args=BIG_ARGS)
        self.assertEqual(array_id, 2)

    def test_queue_cancel_hold_work_with_hundreds_of_mib_stored(self):
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("job.sh", "#!/bin/bash\ntrue\n")
        # 5 arrays of 40 tasks with 1.5 MiB of arguments each: 300 MiB of
        # records, more than any client accepts in one answer (256 MiB).
        arrays = [cluster.submit(script, "--hold", "--array=0-39",
                                 args=BIG_ARGS)
                  for _ in range(5)]
        start = time.monotonic()
        rows = cluster.cli("queue", "-r", "-h", "-o", "%i %T").stdout.split("\n")
        self.assertEqual(len([r for r in rows if r]), 200, rows[:3])
        listing = cluster.cli_json("queue")
        self.assertEqual(len(listing["jobs"]), 200)
        self.assertLess(time.monotonic() - start, 20)

        cluster.cli("release", str(arrays[0]))
        cluster.cli("hold", f"{arrays[0]}_3")
        held = cluster.cli("queue", "-j", str(arrays[0]), "-r", "-h",
                           "-o", "%i %r").stdout.splitlines()
        self.assertIn(f"{arrays[0]}_3 JobHeldUser", held)
        self.assertEqual(len(held), 40)
        # No nodes fit? The released tasks may start and end: either way
        # `cancel -u` must get through and leave nothing pending.
        cluster.cli("cancel", "-u", pwd.getpwuid(os.geteuid()).pw_name)
        self.assertEqual(cluster.cli("queue", "-h").stdout, "")
        # An ID_TASK that names no job is reported as before.
        result = cluster.cli("cancel", f"{arrays[1]}_77", check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"Kill job error on job id {arrays[1]}_77: invalid job "
                      f"id {arrays[1]}_77", result.stderr)

    @unittest.skipUnless(os.geteuid() == 0, "needs root to create a user")
    def test_other_users_see_no_arguments_or_step_commands(self):
        user = f"gtbnd{secrets.token_hex(4)}"
        run("useradd", "-M", "-U", "-s", "/bin/sh", user)
        self.addCleanup(subprocess.run, ["userdel", user], capture_output=True)
        other = pwd.getpwnam(user)
        cluster = self.start_cluster(agents=1)
        os.chmod(cluster.dir, 0o755)  # the other user reaches the socket
        script = cluster.write_script(
            "job.sh",
            "#!/bin/bash\n" + WAIT_FOR_FILE +
            f"{cluster.cli_bin} run echo {SECRET_STEP}\n"
            "wait_for_file release\n")
        job_id = cluster.submit(script, args=(SECRET_ARG,), per_task=False)
        wait_for(lambda: cluster.job(job_id).get("steps"), 30,
                 "the job's step")

        # The owner sees both through the API, and the step's command in
        # gantry job.
        own = json.dumps(self.probe(cluster, "GetJob", str(job_id)))
        self.assertIn(SECRET_ARG, own)
        self.assertIn(SECRET_STEP, own)
        self.assertIn(SECRET_STEP,
                      cluster.cli("job", str(job_id), "--json").stdout)
        # Nobody sees them in a listing, not even the owner.
        for method in ("ListJobs", "StreamJobs"):
            listed = json.dumps(self.probe(cluster, method, "--all"))
            self.assertIn(f'"id": "{job_id}"', listed)
            self.assertNotIn(SECRET_ARG, listed)
            self.assertNotIn(SECRET_STEP, listed)
        # The other user: not through the raw API, not through the CLI.
        for view in (self.probe(cluster, "ListJobs", uid=other.pw_uid),
                     self.probe(cluster, "StreamJobs", uid=other.pw_uid),
                     self.probe(cluster, "GetJob", str(job_id),
                                uid=other.pw_uid)):
            text = json.dumps(view)
            self.assertIn(str(job_id), text)
            self.assertNotIn(SECRET_ARG, text)
            self.assertNotIn(SECRET_STEP, text)  # in the script too
        for args in (("job", str(job_id), "--json"), ("queue", "--json")):
            text = cluster.cli(*args, uid=other.pw_uid).stdout
            self.assertIn(str(job_id), text)
            self.assertNotIn(SECRET_ARG, text)
            self.assertNotIn(SECRET_STEP, text)
        cluster.touch("release")
        cluster.wait_job(job_id, "COMPLETED", timeout=30)

    def test_a_listing_of_many_pages_is_whole_and_in_order(self):
        # 2,500 held tasks: the CLI's stream carries three pages of 1,000,
        # the unary call five of 500; both list every job once, by id.
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("job.sh", "#!/bin/bash\ntrue\n")
        array = cluster.submit(script, "--hold", "--array=0-2499")
        streamed = self.probe(cluster, "StreamJobs", "--page-size", "1000")
        paged = self.probe(cluster, "ListJobs", "--page-size", "500")
        self.assertEqual((streamed["pages"], paged["pages"]), (3, 5))
        for listing in (streamed, paged):
            ids = [int(job["id"]) for job in listing["jobs"]]
            self.assertEqual(ids, sorted(set(ids)))
            self.assertEqual(len(ids), 2500)
        tasks = cluster.cli("queue", "-r", "-h", "-S", "i", "-o",
                            "%K").stdout.split()
        self.assertEqual(tasks, [str(task) for task in range(2500)])
        listed = json.loads(cluster.cli("queue", "--json").stdout)["jobs"]
        self.assertEqual(len(listed), 2500)
        self.assertTrue(all(job["array_job_id"] == array for job in listed))
        cluster.cli("cancel", str(array))

    def test_finished_jobs_leave_the_queue_but_not_the_history(self):
        cluster = self.start_cluster(agents=1,
                                     gantryd_args=["--min-job-age", "1"])
        script = cluster.write_script("job.sh", "#!/bin/bash\ntrue\n")
        finished = cluster.submit(script)
        cluster.wait_job(finished, "COMPLETED")
        pending = cluster.submit(script, "--hold")

        def listed_all():
            return cluster.cli("queue", "--all", "-h", "-o", "%i").stdout.split()

        wait_for(lambda: str(finished) not in listed_all(), 15,
                 f"job {finished} to leave gantry queue --all")
        self.assertEqual(listed_all(), [str(pending)])
        job = cluster.job(finished)
        self.assertEqual(job["state"], "COMPLETED")
        kinds = [event["kind"] for event in job["history"]]
        self.assertIn("completed", kinds)
        self.assertIn(f"JobId={finished} ", cluster.cli("job", str(finished)).stdout)

        cluster.restart_controller()
        self.assertEqual(listed_all(), [str(pending)])
        self.assertEqual(cluster.job(finished)["state"], "COMPLETED")
        self.assertGreater(cluster.submit(script, "--hold"), pending)
        result = cluster.cli("job", "999999", check=False)
        self.assertIn("invalid job id 999999", result.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
