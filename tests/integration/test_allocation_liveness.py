#!/usr/bin/env python3
"""A killed srun or salloc frees its allocation, as Slurm's InactiveLimit
does: srun outside a job and salloc tell gantryd they are still there, and
when one is killed with kill -9 its job ends TIMEOUT with reason
InactiveLimit (squeue, sacct, scontrol show job say so) within the
controller's --inactive-limit, its step tasks stopped. A salloc that lives
holds its allocation for longer than the limit without losing it."""

import os
import re
import signal
import subprocess
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase, wait_for

LIMIT = 2.0  # gantryd --inactive-limit, seconds


class AllocationLivenessTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(
            agents=2, gantryd_args=["--inactive-limit", str(LIMIT)])
        cls.cluster.add_slurm_commands()

    def spawn(self, command):
        """Starts a shell command line in its own session (so the test can
        stop whatever it leaves behind) with the Slurm names on the PATH."""
        process = subprocess.Popen(
            ["bash", "-c", "exec " + command], cwd=self.cluster.work_dir,
            env=self.cluster.env, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, start_new_session=True)

        def stop():
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.communicate(timeout=10)
        self.addCleanup(stop)
        return process

    def sh(self, command, timeout=60):
        return subprocess.run(
            ["bash", "-c", command], cwd=self.cluster.work_dir,
            env=self.cluster.env, capture_output=True, text=True,
            timeout=timeout)

    def ended_by_inactivity(self, job_id, killed_at):
        """Waits for the job's end by the inactive limit, and checks that
        every query says so."""
        job = self.cluster.wait_job(job_id, "TIMEOUT", timeout=LIMIT + 15)
        took = time.monotonic() - killed_at
        # Not before the limit less one keepalive interval (a third of it:
        # the client was heard from until the kill), and well within the
        # limit plus the controller's checks and our polling.
        self.assertGreaterEqual(took, LIMIT / 2, job)
        self.assertLess(took, LIMIT + 8, job)
        shown = self.sh(f"scontrol show job {job_id}")
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertIn("JobState=TIMEOUT Reason=InactiveLimit", shown.stdout)
        accounted = self.sh(f"sacct -X -n -P -j {job_id} -o JobID,State,Reason")
        self.assertEqual(accounted.returncode, 0, accounted.stderr)
        self.assertEqual(accounted.stdout.strip(),
                         f"{job_id}|TIMEOUT|InactiveLimit")
        queued = self.sh(f"squeue -h -t all -j {job_id} -o '%i %T %r'")
        self.assertEqual(queued.returncode, 0, queued.stderr)
        self.assertEqual(queued.stdout.strip(),
                         f"{job_id} TIMEOUT InactiveLimit")
        return job

    def lines(self, name, count):
        """The rows of words of file `name` once it has `count` lines."""
        path = self.cluster.path(name)
        if not os.path.exists(path):
            return None
        rows = [line.split() for line in self.cluster.read(name).splitlines()
                if line.strip()]
        return rows if len(rows) >= count else None

    def wait_step_pid(self, name):
        files = self.cluster.wait_files([name], timeout=30)
        return [int(word) for word in files[name].split()]

    def test_killed_srun_outside_a_job_ends_its_allocation(self):
        client = self.spawn(
            "srun -N2 --ntasks-per-node=1 bash -c "
            "'echo $SLURM_JOB_ID $$ >> srun.tasks; exec sleep 300'")
        rows = wait_for(lambda: self.lines("srun.tasks", 2), 30,
                        "both tasks of the srun step")
        job_id = int(rows[0][0])
        task_pids = [int(row[1]) for row in rows]
        self.assertEqual(self.cluster.job(job_id)["state"], "RUNNING")
        os.kill(client.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        self.ended_by_inactivity(job_id, killed_at)
        self.assert_pids_gone(task_pids, what="tasks of the killed srun")
        # Its nodes are free again: a job asking for both starts.
        result = self.sh("srun -N2 true", timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_killed_salloc_ends_its_allocation(self):
        client = self.spawn(
            "salloc -N1 bash -c 'echo $SLURM_JOB_ID > salloc.job; "
            "srun bash -c \"echo \\$\\$ > salloc.step; exec sleep 300\"'")
        job_id = self.wait_step_pid("salloc.job")[0]
        step_pid = self.wait_step_pid("salloc.step")[0]
        os.kill(client.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        self.ended_by_inactivity(job_id, killed_at)
        self.assert_pids_gone([step_pid], what="the step of the killed salloc")

    def test_a_living_salloc_keeps_its_allocation_past_the_limit(self):
        started = time.monotonic()
        result = self.sh(
            f"salloc -N1 bash -c 'echo job=$SLURM_JOB_ID; sleep {3 * LIMIT}; "
            "srun -n1 echo step-ran'", timeout=120)
        self.assertGreaterEqual(time.monotonic() - started, 3 * LIMIT)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("step-ran", result.stdout)
        self.assertNotIn("revoked", result.stderr)
        job_id = int(re.search(r"job=(\d+)", result.stdout).group(1))
        self.cluster.wait_job(job_id, "COMPLETED", timeout=10)

        # And an srun whose step outlives the limit.
        result = self.sh(f"srun -N1 bash -c 'sleep {3 * LIMIT}; "
                         "echo $SLURM_JOB_ID'", timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.cluster.wait_job(int(result.stdout), "COMPLETED", timeout=10)

    def test_a_restarted_controller_gives_clients_a_grace_period(self):
        """gantryd down for longer than the limit: the salloc that holds
        an allocation through it keeps it."""
        cluster = self.cluster
        client = self.spawn(
            f"salloc -N1 bash -c 'echo $SLURM_JOB_ID > grace.job; "
            f"sleep {4 * LIMIT}; echo done > grace.done'")
        job_id = self.wait_step_pid("grace.job")[0]
        cluster.kill_controller()
        time.sleep(LIMIT * 1.5)
        cluster.start_controller()
        cluster.wait_nodes_up(list(cluster.agents), timeout=30)
        _, err = client.communicate(timeout=60)
        self.assertEqual(client.returncode, 0, err)
        self.assertNotIn("revoked", err)
        cluster.wait_job(job_id, "COMPLETED", timeout=10)


if __name__ == "__main__":
    gantry_cluster.main()
