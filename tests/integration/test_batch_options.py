#!/usr/bin/env python3
"""sbatch options beyond the shape of the job: --test-only submits nothing,
--begin holds a job (reason BeginTime), --wait returns the job's exit code,
--export chooses the inherited environment (and submissions exporting the
same one share its stored copy), --no-requeue means no automatic restart,
--gpus-per-task/--mem-per-cpu become per-node requests."""

import sys
import threading
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase


class BatchOptionsTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=1)

    def test_test_only_submits_nothing(self):
        cluster = self.cluster
        script = cluster.write_script("t.sh", "#!/bin/bash\ntrue\n")
        before = cluster.cli_json("queue", "--all")
        result = cluster.cli("batch", "--test-only", script)
        self.assertIn("would accept", result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertEqual(cluster.cli_json("queue", "--all"), before)
        bad = cluster.cli("batch", "--test-only", "-N", "0", script,
                          check=False)
        self.assertNotEqual(bad.returncode, 0)

    def test_begin_holds_the_job_until_then(self):
        cluster = self.cluster
        script = cluster.write_script("b.sh", "#!/bin/bash\ntrue\n")
        submitted = time.time()
        job_id = cluster.submit(script, "--begin=now+3")
        job = cluster.job(job_id)
        self.assertEqual(job["state"], "PENDING")
        self.assertEqual(job["reason"], "BeginTime")
        job = cluster.wait_job(job_id, "COMPLETED", timeout=20)
        self.assertGreaterEqual(time.time() - submitted, 2.5)
        bad = cluster.cli("batch", "--begin=yesterday", script, check=False)
        self.assertIn("bad begin time", bad.stderr)

    def test_wait_returns_the_exit_code(self):
        cluster = self.cluster
        script = cluster.write_script("w.sh", "#!/bin/bash\nsleep 1\nexit 3\n")
        result = cluster.cli("batch", "--wait", "--max-restarts=0", script,
                             check=False, timeout=60)
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertIn("Submitted batch job", result.stdout)

    def test_export_and_no_requeue(self):
        cluster = self.cluster
        cluster.env["GANTRY_IT_SECRET"] = "from-the-shell"
        script = cluster.write_script("e.sh", """#!/bin/bash
#SBATCH -o export.out
echo "secret=[$GANTRY_IT_SECRET] foo=[$FOO] path=[$PATH]"
exit 1
""")
        job_id = cluster.submit(script, "--export=NONE,FOO=bar",
                                "--no-requeue")
        job = cluster.wait_job(job_id, "FAILED", timeout=20)
        self.assertEqual(len(job["attempts"]), 1)  # no restart
        out = cluster.read("export.out")
        self.assertIn("secret=[] foo=[bar]", out)
        self.assertIn("path=[/usr/local/bin:/usr/bin:/bin]", out)

    def test_per_task_and_per_cpu_requests_become_per_node(self):
        cluster = self.cluster
        script = cluster.write_script("g.sh", "#!/bin/bash\ntrue\n")
        job_id = cluster.submit(script, "--ntasks-per-node=2",
                                "--mem-per-cpu=10M", "-c", "1", "--begin=now+60")
        job = cluster.job(job_id)
        self.assertEqual(job["memory_per_node_mb"], 20)
        cluster.cli("cancel", str(job_id))
        clash = cluster.cli("batch", "--mem=1G", "--mem-per-cpu=1G", script,
                            check=False)
        self.assertIn("mutually exclusive", clash.stderr)


class SharedEnvironmentTest(ClusterTestCase):
    """Submissions that export the same environment store it once (the
    later ones refer to the first's copy): each job still runs with the
    environment it was submitted with, across a controller restart."""

    def test_jobs_sharing_an_environment_run_with_their_own(self):
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("sweep.sh", """#!/bin/bash
echo "sweep=[$GANTRY_IT_SWEEP] task=[$1]"
""")
        submitted = []
        for value, tasks in (("alpha", 3), ("beta", 2), ("alpha", 1)):
            cluster.env["GANTRY_IT_SWEEP"] = value
            for _ in range(tasks):
                task = len(submitted)
                job_id = cluster.submit(script, "--hold", "-o",
                                        f"sweep-{task}.out", args=[str(task)])
                submitted.append((job_id, value, task))
        # The references are read back from the store, not from memory.
        cluster.restart_controller()
        cluster.cli("release", *[str(job_id) for job_id, _, _ in submitted])
        for job_id, value, task in submitted:
            cluster.wait_job(job_id, "COMPLETED", timeout=30)
            self.assertEqual(cluster.read(f"sweep-{task}.out").strip(),
                             f"sweep=[{value}] task=[{task}]")


class BackPressureTest(ClusterTestCase):
    """A controller with room for one waiting submission: a burst of CLI
    submissions is refused as busy and retried by the CLI until every one
    is stored, each once."""

    def test_busy_controller_submissions_are_retried(self):
        cluster = self.start_cluster(
            agents=1, gantryd_args=["--max-pending-submissions", "1"])
        script = cluster.write_script("q.sh", "#!/bin/bash\ntrue\n")
        results = []
        threads = [threading.Thread(target=lambda: results.append(
            cluster.cli("batch", "--parsable", "--begin=now+600", script,
                        check=False, timeout=120)))
            for _ in range(24)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([r.returncode for r in results], [0] * 24,
                         [r.stderr for r in results])
        # The burst did meet a busy controller (else this test shows
        # nothing); on a machine too slow to overlap 24 processes, say so.
        busy = sum("controller is busy" in r.stderr for r in results)
        print(f"{busy} of 24 submissions were refused as busy first",
              file=sys.stderr)
        ids = sorted(int(r.stdout) for r in results)
        self.assertEqual(len(set(ids)), 24)
        stored = [j for j in cluster.cli_json("queue", "--all")["jobs"]]
        self.assertEqual(sorted(j["job_id"] for j in stored), ids)


if __name__ == "__main__":
    gantry_cluster.main()
