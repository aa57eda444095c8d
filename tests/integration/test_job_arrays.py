#!/usr/bin/env python3
"""sbatch --array on a real cluster of 2 agents: every task is its own job
with consecutive ids and gets SLURM_ARRAY_* in its environment and its own
%A_%a output file; a %N throttle keeps at most N tasks running (the rest
wait with reason JobArrayTaskLimit); `gantry cancel A` cancels every task
and `gantry cancel A_3` one; `-j A_3` and `gantry job A_3` find a task;
afterok on an array waits for all its tasks; bad --array values are refused
with nothing submitted."""

import time

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase

ENV_DUMP = """#!/bin/bash
env | grep -E '^(SLURM|GANTRY)_(ARRAY_|JOB_ID=)' | sort
"""

# Each task records that it started, then waits for its own release file.
GATED_TASK = "#!/bin/bash\n" + WAIT_FOR_FILE + """
echo started > "started-$SLURM_ARRAY_TASK_ID"
wait_for_file "release-$SLURM_ARRAY_TASK_ID"
"""

QUICK = "#!/bin/bash\nexit 0\n"


def parse_env(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


class JobArraysTest(ClusterTestCase):

    def array_jobs(self, cluster, array_id):
        """The tasks of an array as `gantry queue -j A --json` lists them."""
        return cluster.cli_json("queue", "-j", str(array_id))["jobs"]

    def test_tasks_get_their_environment_and_output_files(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("dump.sh", ENV_DUMP)
        plain = cluster.cli("batch", "--per-task", "--array=0-5:2", script)
        self.assertRegex(plain.stdout, r"^Submitted batch job \d+\n$")
        array_id = int(plain.stdout.split()[-1])
        tasks = {0: array_id, 2: array_id + 1, 4: array_id + 2}
        for job_id in tasks.values():
            cluster.wait_job(job_id, "COMPLETED")
        for task, job_id in tasks.items():
            env = parse_env(cluster.read(f"gantry-{array_id}_{task}.out"))
            for prefix in ("SLURM_ARRAY_", "GANTRY_ARRAY_"):
                self.assertEqual(env[prefix + "JOB_ID"], str(array_id))
                self.assertEqual(env[prefix + "TASK_ID"], str(task))
                self.assertEqual(env[prefix + "TASK_COUNT"], "3")
                self.assertEqual(env[prefix + "TASK_MIN"], "0")
                self.assertEqual(env[prefix + "TASK_MAX"], "4")
                self.assertEqual(env[prefix + "TASK_STEP"], "2")
            # %j and SLURM_JOB_ID stay the task's own job id.
            self.assertEqual(env["SLURM_JOB_ID"], str(job_id))
        listed = self.array_jobs(cluster, array_id)
        self.assertEqual(
            sorted((j["job_id"], j["array_job_id"], j["array_task_id"])
                   for j in listed),
            [(job_id, array_id, task) for task, job_id in tasks.items()])
        self.assertEqual(listed[0]["array"], "0-4:2")

        # --output patterns, from an #SBATCH line; once the script runs on
        # the first node only (sbatch's way).
        directive = cluster.write_script(
            "directive.sh", "#!/bin/bash\n#SBATCH -a 1,3\n"
            "#SBATCH --output=custom-%A_%a-%j.log\n" + ENV_DUMP.split("\n", 1)[1])
        second = cluster.submit(directive, per_task=False)
        for offset, task in enumerate((1, 3)):
            job_id = second + offset
            cluster.wait_job(job_id, "COMPLETED")
            env = parse_env(cluster.read(f"custom-{second}_{task}-{job_id}.log"))
            self.assertEqual(env["SLURM_ARRAY_TASK_ID"], str(task))
            self.assertEqual(env["SLURM_ARRAY_TASK_STEP"], "2")
        # A job that is no array gets no array variables.
        single = cluster.submit(script)
        cluster.wait_job(single, "COMPLETED")
        self.assertNotIn("ARRAY", cluster.read(f"gantry-{single}.out"))
        self.assertIsNone(cluster.job(single)["array_job_id"])

    def test_throttle_keeps_at_most_n_running(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("gated.sh", GATED_TASK)
        array_id = cluster.submit(script, "--array=0-5%2")
        # The cluster has room for 4 one-CPU tasks: only the throttle stops
        # the third.
        cluster.wait_files(["started-0", "started-1"])
        gantry_cluster.wait_for(
            lambda: all(j["reason"] == "JobArrayTaskLimit"
                        for j in self.array_jobs(cluster, array_id)
                        if j["state"] == "PENDING"),
            10, "the pending tasks to wait with reason JobArrayTaskLimit")
        queue = cluster.cli("queue", "-j", str(array_id), "-o", "%i %t %r")
        # squeue's folding: the pending tasks on one line.
        self.assertIn(f"{array_id}_[2-5%2] PD JobArrayTaskLimit",
                      queue.stdout)
        unfolded = cluster.cli("queue", "-r", "-j", str(array_id), "-o",
                               "%i %t %r")
        self.assertIn(f"{array_id}_5 PD JobArrayTaskLimit", unfolded.stdout)
        detail = cluster.job(array_id + 5)["reason_detail"]
        self.assertIn("at most 2 task(s) at once", detail)

        most_running = 0
        deadline = time.monotonic() + 60
        while True:
            jobs = self.array_jobs(cluster, array_id)
            running = [j for j in jobs if j["state"] == "RUNNING"]
            most_running = max(most_running, len(running))
            self.assertLessEqual(len(running), 2, jobs)
            if all(j["state"] == "COMPLETED" for j in jobs):
                break
            self.assertLess(time.monotonic(), deadline, jobs)
            # Release one task at a time, the lowest running one.
            if running:
                task = min(j["array_task_id"] for j in running)
                cluster.touch(f"release-{task}")
            time.sleep(0.3)
        self.assertEqual(most_running, 2)
        cluster.wait_files([f"started-{task}" for task in range(6)])

    def test_cancel_the_whole_array_or_one_task(self):
        cluster = self.start_cluster(agents=2)
        script = cluster.write_script("gated.sh", GATED_TASK)
        array_id = cluster.submit(script, "--array=0-5")
        # 4 run (one CPU each on 2 nodes of 2 CPUs), 2 wait for resources.
        cluster.wait_files([f"started-{task}" for task in range(4)])

        one = cluster.cli_json("job", f"{array_id}_3")
        self.assertEqual((one["job_id"], one["array_job_id"],
                          one["array_task_id"]), (array_id + 3, array_id, 3))
        text = cluster.cli("job", f"{array_id}_3").stdout
        self.assertIn(f"JobId={array_id + 3} ArrayJobId={array_id} "
                      "ArrayTaskId=3", text)
        listed = cluster.cli("queue", "-j", f"{array_id}_3", "-h", "-o", "%i")
        self.assertEqual(listed.stdout, f"{array_id}_3\n")
        missing = cluster.cli("job", f"{array_id}_9", check=False)
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn(f"invalid job id {array_id}_9", missing.stderr)

        cluster.cli("cancel", f"{array_id}_3")
        cluster.wait_job(array_id + 3, "CANCELLED")
        for job in self.array_jobs(cluster, array_id):
            if job["array_task_id"] != 3:
                self.assertIn(job["state"], ("PENDING", "RUNNING"), job)

        cluster.cli("cancel", str(array_id))
        for offset in range(6):
            cluster.wait_job(array_id + offset, "CANCELLED")

    def test_afterok_waits_for_every_task(self):
        cluster = self.start_cluster(agents=2)
        gated = cluster.write_script("gated.sh", GATED_TASK)
        quick = cluster.write_script("quick.sh", QUICK)
        array_id = cluster.submit(gated, "--array=0-2")
        after = cluster.submit(quick, f"--dependency=afterok:{array_id}")
        # One task of the array: ID_TASK, stored as that task's job id.
        after_task = cluster.submit(quick,
                                    f"--dependency=afterok:{array_id}_1")
        self.assertEqual(cluster.job(after_task)["dependency"],
                         f"afterok:{array_id + 1}")
        missing = cluster.cli("batch", f"--dependency=afterok:{array_id}_7",
                              quick, check=False)
        self.assertIn(f"array task {array_id}_7 does not exist",
                      missing.stderr)
        cluster.wait_files([f"started-{task}" for task in range(3)])
        cluster.touch("release-1")
        cluster.wait_job(after_task, "COMPLETED")
        cluster.touch("release-0")
        cluster.touch("release-1")
        cluster.wait_job(array_id, "COMPLETED")
        cluster.wait_job(array_id + 1, "COMPLETED")
        time.sleep(1)
        job = cluster.job(after)
        self.assertEqual((job["state"], job["reason"]),
                         ("PENDING", "Dependency"), job)
        cluster.touch("release-2")
        cluster.wait_job(after, "COMPLETED")

        # One failed task: afterok can never hold.
        failing = cluster.write_script(
            "fail_one.sh",
            "#!/bin/bash\n[ \"$SLURM_ARRAY_TASK_ID\" != 1 ]\n")
        second = cluster.submit(failing, "--array=0-2", "--max-restarts=0")
        never = cluster.submit(quick, f"--dependency=afterok:{second}")
        cluster.wait_job(second + 1, "FAILED")
        gantry_cluster.wait_for(
            lambda: cluster.job(never)["reason"] == "DependencyNeverSatisfied",
            15, "afterok on an array with a failed task to never hold")
        cluster.cli("cancel", str(never))

    def test_bad_values_submit_nothing(self):
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script("quick.sh", QUICK)
        cases = {
            "--array=5-1": "starts above its end",
            "--array=0-20000": "the limit is 10000",
            "--array=0-4000001:1000": "above the limit of 4000000",
            "--array=x": "\"x\" is not an index or range",
            "--array=0-3%0": "at least 1 task",
        }
        for option, reason in cases.items():
            result = cluster.cli("batch", option, script, check=False)
            self.assertNotEqual(result.returncode, 0, option)
            self.assertIn("for --array: ", result.stderr, option)
            self.assertIn(reason, result.stderr, option)
            self.assertEqual(result.stdout, "", option)
        directive = cluster.write_script(
            "bad.sh", "#!/bin/bash\n#SBATCH --array=3-2\nexit 0\n")
        result = cluster.cli("batch", directive, check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("#SBATCH line 2: invalid value \"3-2\" for --array",
                      result.stderr)
        self.assertEqual(cluster.cli_json("queue", "-a")["jobs"], [])

    def test_storage_bound_counts_the_script_per_task_and_the_environment_once(self):
        cluster = self.start_cluster(agents=1)
        # 900 KiB exported (the kernel caps one variable at 128 KiB): 300
        # tasks would be 270 MiB if every task stored it, over the 64 MiB
        # bound; the environment is stored once, so the array is taken.
        script = cluster.write_script("quick.sh", QUICK)
        plain_env = dict(cluster.env)
        for i in range(9):
            cluster.env[f"BIG_EXPORT_{i}"] = "x" * (100 << 10)
        try:
            result = cluster.cli("batch", "--parsable", "--hold",
                                 "--array=0-299", script)
        finally:
            cluster.env = plain_env
        array_id = int(result.stdout)
        self.assertEqual(len(self.array_jobs(cluster, array_id)), 300)
        cluster.cli("cancel", str(array_id))
        # The script is every task's own copy: 300 x 1 MiB is refused.
        big = cluster.write_script(
            "big.sh", "#!/bin/bash\n" + ("# padding\n" * (105 << 10)))
        refused = cluster.cli("batch", "--array=0-299", big, check=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("300 task(s) of ", refused.stderr)
        self.assertIn("the limit per submission is 64 MiB", refused.stderr)
        self.assertEqual(refused.stdout, "")
        self.assertEqual(
            {j["job_id"] for j in cluster.cli_json("queue", "-a")["jobs"]},
            set(range(array_id, array_id + 300)))


if __name__ == "__main__":
    gantry_cluster.main()
