#!/usr/bin/env python3
"""Submission options that count GPUs, time and environment, as Slurm's do,
with the real gantryd, two agents whose nodes (an hwloc XML of a 4-GPU
server) have 4 GPUs each, and the CLI under Slurm's names:

- -G/--gpus=8 without -N is 2 nodes, from the nodes' real GPU counts
  (SLURM_GPUS stays the total); a GPU type too; -N 2 -G 6 is 3 per node;
  more GPUs than the partition's nodes hold is refused at submission;
- --ntasks-per-gpu=1 -G 8 is 8 tasks, and srun binds each to its own GPU;
- --export-file's variables (NUL-separated) over --export's;
- --deadline: a pending job that can no longer end by it ends DEADLINE
  (squeue and sacct -s DL list it), a running one is stopped at it;
- HOME is the submitter's (--export=ALL), the user's home with
  --export=NONE.
"""

import os
import pwd
import re
import subprocess
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase

class SubmissionGpusTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        # Two 4-GPU nodes (NVIDIA H100).
        cls.cluster = cls.start_class_cluster(
            agents=2, agent_args=gantry_cluster.gpu_node_agent_args(
                "node01", "node02"))
        cls.cluster.add_slurm_commands()

    def sbatch(self, options, command, env=None):
        """sbatch --parsable OPTIONS --wrap COMMAND; returns the job id."""
        result = subprocess.run(
            ["sbatch", "--parsable", *options, "--wrap", command],
            cwd=self.cluster.work_dir,
            env={**self.cluster.env, **(env or {})},
            capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        return int(result.stdout)

    def output(self, job_id):
        return self.cluster.read(f"gantry-{job_id}.out")

    def test_gpus_pick_the_node_count(self):
        c = self.cluster
        job_id = self.sbatch(
            ["-G", "8"], "echo gpus=$SLURM_GPUS nodes=$SLURM_JOB_NUM_NODES")
        job = c.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["nodelist"], "node[01-02]")
        self.assertEqual(job["gpus"], 8)
        self.assertEqual(job["gpus_per_node"], 4)
        self.assertEqual([len(share["gpus"])
                          for share in job["allocation"]], [4, 4])
        self.assertIn("gpus=8 nodes=2", self.output(job_id))

        job_id = self.sbatch(["--gpus=h100:4"], "true")
        job = c.wait_job(job_id, "COMPLETED")
        self.assertEqual(len(job["allocation"]), 1)

        job_id = self.sbatch(["-N", "2", "--gpus=6"], "echo gpus=$SLURM_GPUS")
        job = c.wait_job(job_id, "COMPLETED")
        self.assertEqual([len(share["gpus"])
                          for share in job["allocation"]], [3, 3])
        self.assertIn("gpus=6", self.output(job_id))

        result = self.sh("sbatch -G 12 --wrap true")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("the job needs 3 node(s)", result.stderr)
        self.assertIn("4 GPUs each", result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)

    def test_ntasks_per_gpu_binds_each_task_to_a_gpu(self):
        c = self.cluster
        job_id = self.sbatch(
            ["-G", "8", "--ntasks-per-gpu=1"],
            "srun bash -c 'echo task $SLURM_PROCID $SLURMD_NODENAME "
            "cvd=$CUDA_VISIBLE_DEVICES'")
        c.wait_job(job_id, "COMPLETED", timeout=40)
        tasks = re.findall(r"task (\d+) (\S+) cvd=(\S*)", self.output(job_id))
        self.assertEqual(sorted(int(t[0]) for t in tasks), list(range(8)),
                         self.output(job_id))
        by_node = {}
        for _, node, gpus in tasks:
            self.assertNotIn(",", gpus, "one GPU per task")
            by_node.setdefault(node, set()).add(gpus)
        self.assertEqual(sorted(len(g) for g in by_node.values()), [4, 4],
                         by_node)

        result = self.sh("sbatch -G 2 --ntasks-per-gpu=2 --wrap true")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("--ntasks-per-gpu=2: 2 tasks share each GPU",
                      result.stderr)
        job = c.wait_job(int(result.stdout.split()[-1]), "COMPLETED")
        self.assertEqual(job["ntasks"], 4)

    def test_export_file_over_export(self):
        c = self.cluster
        with open(os.path.join(c.work_dir, "env.bin"), "wb") as f:
            f.write(b"FOO=from file\0MULTI=a\nb\0")
        job_id = self.sbatch(
            ["--export=ALL,FOO=from-cli", "--export-file=env.bin"],
            "printf '%s|' \"$FOO\" \"$MULTI\" \"$BAR\"",
            env={"FOO": "from-env", "BAR": "kept"})
        c.wait_job(job_id, "COMPLETED")
        self.assertEqual(self.output(job_id), "from file|a\nb|kept|")

        with open(os.path.join(c.work_dir, "bad.env"), "w") as f:
            f.write("GOOD=1\nnot a record\n")
        result = self.sh("sbatch --export-file=bad.env --wrap true")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("--export-file: record 2", result.stderr)

    def test_deadline_pending_and_running(self):
        c = self.cluster
        # Held, with a minute's time limit and a deadline 63 s away: once
        # a few seconds pass it can no longer end in time.
        pending = self.sbatch(["-H", "-t", "1", "--deadline=now+63"], "true")
        running = self.sbatch(["--deadline=now+4"], "sleep 60")
        c.wait_job(running, "RUNNING")
        started = time.monotonic()
        job = c.wait_job(pending, "DEADLINE", timeout=20)
        self.assertEqual(job["reason"], "DeadLine")
        job = c.wait_job(running, "DEADLINE", timeout=20)
        self.assertEqual(job["reason"], "DeadLine")
        self.assertLess(time.monotonic() - started, 15)

        listed = self.sh("squeue -h -t DL -o '%i %T'")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertIn(f"{pending} DEADLINE", listed.stdout)
        # -s alone asks for jobs in the state now (man sacct); these ended
        # in the last seconds.
        accounted = self.sh(
            "sacct -X -n -P -s DL -S now-10minutes -E now -o JobID,State")
        self.assertEqual(accounted.returncode, 0, accounted.stderr)
        self.assertIn(f"{pending}|DEADLINE", accounted.stdout.split())
        self.assertIn(f"{running}|DEADLINE", accounted.stdout.split())

        result = self.sh("sbatch --deadline=2000-01-01 --wrap true")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("--deadline is in the past", result.stderr)

    def test_home_is_the_submitters(self):
        c = self.cluster
        job_id = self.sbatch([], "echo home=$HOME",
                             env={"HOME": "/tmp/submitter-home"})
        c.wait_job(job_id, "COMPLETED")
        self.assertEqual(self.output(job_id).strip(),
                         "home=/tmp/submitter-home")
        job_id = self.sbatch(["--export=NONE"], "echo home=$HOME",
                             env={"HOME": "/tmp/submitter-home"})
        c.wait_job(job_id, "COMPLETED")
        self.assertEqual(self.output(job_id).strip(),
                         "home=" + pwd.getpwuid(os.getuid()).pw_dir)


if __name__ == "__main__":
    gantry_cluster.main()
