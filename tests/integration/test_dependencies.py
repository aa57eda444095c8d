#!/usr/bin/env python3
"""sbatch --dependency on a real cluster: afterok/afterany run after the
first job completes, afternotok never does (DependencyNeverSatisfied),
after starts once the first job starts, singleton serializes jobs of one
name, the reasons show in gantry queue, and bad dependencies are refused at
submit."""

import gantry_cluster
from gantry_cluster import ClusterTestCase

# Runs until the file `release` exists in its working directory, so the
# test decides when it ends.
GATED = """#!/bin/bash
while [ ! -e release ]; do sleep 0.1; done
"""

QUICK = """#!/bin/bash
exit 0
"""

SLEEPER = """#!/bin/bash
sleep 300
"""


class DependenciesTest(ClusterTestCase):

    def reason(self, cluster, job_id):
        return cluster.job(job_id)["reason"]

    def wait_reason(self, cluster, job_id, reason):
        gantry_cluster.wait_for(
            lambda: self.reason(cluster, job_id) == reason, 15,
            f"job {job_id} to wait with reason {reason}")

    def test_chains_follow_the_first_jobs_outcome(self):
        cluster = self.start_cluster(agents=2)
        gated = cluster.write_script("gated.sh", GATED)
        quick = cluster.write_script("quick.sh", QUICK)
        first = cluster.submit(gated)
        ok = cluster.submit(quick, f"--dependency=afterok:{first}")
        not_ok = cluster.submit(quick, "-d", f"afternotok:{first}")
        any_end = cluster.submit(quick, f"--dependency=afterany:{first}")
        started = cluster.submit(quick, f"--dependency=after:{first}")
        cluster.wait_job(first, "RUNNING")
        cluster.wait_job(started, "COMPLETED")
        for job_id in (ok, not_ok, any_end):
            self.wait_reason(cluster, job_id, "Dependency")
        self.assertIn(f"job {first} has not ended",
                      cluster.job(ok)["reason_detail"])
        self.assertEqual(cluster.job(ok)["dependency"], f"afterok:{first}")
        queue = cluster.cli("queue", "-o", "%i %E %r").stdout
        self.assertIn(f"{ok} afterok:{first} Dependency", queue)

        cluster.touch("release")
        cluster.wait_job(first, "COMPLETED")
        cluster.wait_job(ok, "COMPLETED")
        cluster.wait_job(any_end, "COMPLETED")
        self.wait_reason(cluster, not_ok, "DependencyNeverSatisfied")
        self.assertEqual(cluster.job(not_ok)["state"], "PENDING")
        self.assertIn("completed", cluster.job(not_ok)["reason_detail"])
        cluster.cli("cancel", str(not_ok))
        cluster.wait_job(not_ok, "CANCELLED")

    def test_afternotok_runs_after_a_failure(self):
        cluster = self.start_cluster(agents=1)
        failing = cluster.write_script("fail.sh", "#!/bin/bash\nexit 3\n")
        quick = cluster.write_script("quick.sh", QUICK)
        first = cluster.submit(failing, "--max-restarts=0")
        cleanup = cluster.submit(quick, f"--dependency=afternotok:{first}")
        never = cluster.submit(quick, f"--dependency=afterok:{first}")
        cluster.wait_job(first, "FAILED")
        cluster.wait_job(cleanup, "COMPLETED")
        self.wait_reason(cluster, never, "DependencyNeverSatisfied")
        cluster.cli("cancel", str(never))

    def test_singleton_runs_one_job_of_a_name_at_a_time(self):
        cluster = self.start_cluster(agents=2)
        sleeper = cluster.write_script("sleeper.sh", SLEEPER)
        first = cluster.submit(sleeper, "-J", "sweep", "-d", "singleton")
        second = cluster.submit(sleeper, "-J", "sweep", "-d", "singleton")
        other = cluster.submit(sleeper, "-J", "other", "-d", "singleton")
        cluster.wait_job(first, "RUNNING")
        cluster.wait_job(other, "RUNNING")
        self.wait_reason(cluster, second, "Dependency")
        cluster.cli("cancel", str(first))
        cluster.wait_job(second, "RUNNING")
        cluster.cli("cancel", str(second), str(other))

    def test_bad_dependencies_are_refused(self):
        cluster = self.start_cluster(agents=1)
        quick = cluster.write_script("quick.sh", QUICK)
        for value, message in (
                ("afterok:9999", "job 9999 does not exist"),
                ("afterok:x", "is not a job id"),
                ("afterok:1,afterany:2?after:3", "not both"),
                ("before:1", "expected after")):
            result = cluster.cli("batch", f"--dependency={value}", quick,
                                 check=False)
            self.assertNotEqual(result.returncode, 0, value)
            self.assertIn(message, result.stderr, value)
        # Nothing was queued.
        self.assertEqual(cluster.cli_json("queue", "--all")["jobs"], [])


if __name__ == "__main__":
    gantry_cluster.main()
