#!/usr/bin/env python3
"""Submission as Slurm does it, with the real gantryd, agents and CLI:

- SBATCH_* input variables, with Slurm's precedence (command line >
  environment > #SBATCH directives), and a bad one named in the error;
- -n with --ntasks-per-node and no -N spreads the tasks over nodes, and
  -n alone packs as many tasks on a node as its CPUs allow;
- -o %N names the node the batch script runs on;
- sbatch options Gantry does not act on warn with the reason, -Q silences
  the warnings, and options that would change the job are refused;
- the rank variables SLURM_GTIDS, SLURM_JOB_DEPENDENCY, SLURM_SUBMIT_HOST,
  SLURM_EXPORT_ENV, SLURM_MEM_PER_CPU, SLURM_JOB_ACCOUNT, SLURM_JOB_QOS,
  and HOME.
(A failed script is FAILED, not re-run: test_fault_tolerance.py.)
"""

import os
import socket
import subprocess

import gantry_cluster
from gantry_cluster import ClusterTestCase

SCRIPT = """#!/bin/bash
#SBATCH -J fromscript
#SBATCH -t 30
echo "gtids=$SLURM_GTIDS dep=$SLURM_JOB_DEPENDENCY"
"""


class SubmissionTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=2)

    def batch(self, *options, env=None, script="job.sh"):
        c = self.cluster
        c.write_script(script, SCRIPT)
        return subprocess.run(
            [c.cli_bin, "batch", "--parsable", *options, script],
            cwd=c.work_dir, env={**c.env, **(env or {})},
            capture_output=True, text=True, timeout=30)

    def submitted(self, *options, env=None):
        result = self.batch(*options, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        return int(result.stdout), result.stderr

    def test_sbatch_variables_with_slurms_precedence(self):
        c = self.cluster
        job_id, _ = self.submitted(env={"SBATCH_JOB_NAME": "fromenv",
                                        "SBATCH_TIMELIMIT": "20"})
        job = c.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["name"], "fromenv")
        self.assertEqual(job["time_limit_seconds"], 1200)

        job_id, _ = self.submitted("-J", "fromcli",
                                   env={"SBATCH_JOB_NAME": "fromenv"})
        self.assertEqual(c.wait_job(job_id, "COMPLETED")["name"], "fromcli")

        job_id, _ = self.submitted()
        self.assertEqual(c.wait_job(job_id, "COMPLETED")["name"], "fromscript")

        result = self.batch(env={"SBATCH_TIMELIMIT": "soon"})
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("environment SBATCH_TIMELIMIT", result.stderr)

    def test_tasks_spread_over_nodes(self):
        c = self.cluster
        job_id, _ = self.submitted("-n", "2", "--ntasks-per-node=1")
        job = c.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["nodelist"], "node[01-02]")
        self.assertEqual(len(job["allocation"]), 2, job["allocation"])

    def test_tasks_beyond_a_nodes_cpus_spread(self):
        # -n alone: as many tasks per node as its CPUs allow, then more nodes.
        c = self.cluster
        cpus = c.nodes()["node01"]["cpus"]
        job_id, _ = self.submitted("-n", str(cpus + 1))
        job = c.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["nodelist"], "node[01-02]")
        job_id, _ = self.submitted("-n", str(cpus))
        self.assertEqual(len(c.wait_job(job_id, "COMPLETED")["allocation"]), 1)

    def test_output_pattern_names_the_node(self):
        c = self.cluster
        job_id, _ = self.submitted("-o", "out-%N-%j.txt", "-e",
                                   "err-%N-%j.txt")
        job = c.wait_job(job_id, "COMPLETED")
        node = job["nodelist"]
        self.assertIn("gtids=0", c.read(f"out-{node}-{job_id}.txt"))
        c.read(f"err-{node}-{job_id}.txt")  # exists

    def test_ignored_options_warn_and_quiet_silences(self):
        c = self.cluster
        job_id, stderr = self.submitted("--gpu-bind=closest", "--tmp=1G", "-s")
        self.assertIn("--gpu-bind is ignored: ", stderr)
        self.assertIn("--tmp is ignored: ", stderr)
        self.assertIn("--oversubscribe is ignored: ", stderr)
        c.wait_job(job_id, "COMPLETED")
        job_id, stderr = self.submitted("-Q", "--gpu-bind=closest")
        self.assertEqual(stderr, "")
        c.wait_job(job_id, "COMPLETED")
        for option in ("--bb=capacity=1G", "--ntasks-per-gpu=2",
                       "--export-file=no-such-env.txt", "--deadline=2000-01-01"):
            result = self.batch(option)
            self.assertNotEqual(result.returncode, 0, option)
            self.assertNotIn("unknown option", result.stderr)
            self.assertIn(option.split("=")[0], result.stderr)

    def test_rank_variables(self):
        c = self.cluster
        first, _ = self.submitted("-n", "2", "--per-task")
        c.wait_job(first, "COMPLETED")
        self.assertEqual(
            sorted(c.read(f"gantry-{first}.out").split("\n")[:2]),
            ["gtids=0,1 dep=", "gtids=0,1 dep="])
        second, _ = self.submitted(f"--dependency=afterok:{first}")
        c.wait_job(second, "COMPLETED")
        self.assertIn(f"dep=afterok:{first}", c.read(f"gantry-{second}.out"))

    def test_submission_variables(self):
        c = self.cluster
        c.write_script("vars.sh", "#!/bin/bash\n"
                       "echo host=$SLURM_SUBMIT_HOST export=$SLURM_EXPORT_ENV "
                       "mem=$SLURM_MEM_PER_CPU home=$HOME "
                       "account=$SLURM_JOB_ACCOUNT qos=$SLURM_JOB_QOS\n")
        result = subprocess.run(
            [c.cli_bin, "batch", "--parsable", "--export=ALL,FOO=1",
             "--mem-per-cpu=100", "-A", "ml", "--qos=high", "vars.sh"],
            cwd=c.work_dir, env=c.env, capture_output=True, text=True,
            timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        job_id = int(result.stdout)
        c.wait_job(job_id, "COMPLETED")
        words = dict(w.split("=", 1)
                     for w in c.read(f"gantry-{job_id}.out").split())
        self.assertEqual(words["host"], socket.gethostname())
        self.assertEqual(words["export"], "ALL,FOO=1")
        self.assertEqual(words["mem"], "100")
        self.assertEqual(words["home"], os.path.expanduser("~"))
        self.assertEqual((words["account"], words["qos"]), ("ml", "high"))


if __name__ == "__main__":
    gantry_cluster.main()
