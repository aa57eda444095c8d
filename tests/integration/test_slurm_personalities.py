#!/usr/bin/env python3
"""The gantry binary run as sbatch, squeue, sinfo, scontrol and scancel (the
links gantry-slurm-compat installs): Slurm's spellings give Slurm's answers,
and what gantry does not offer (srun, scontrol update) says so."""

import os
import pwd
import subprocess
import tempfile

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase

SLURM_NAMES = ("sbatch", "squeue", "scancel", "sinfo", "scontrol", "srun")

# Waits for release.<job id>; a USR1 on the way is written down.
TRAP_USR1 = """#!/bin/bash
trap 'echo got USR1 > usr1.$SLURM_JOB_ID' USR1
""" + WAIT_FOR_FILE + """
echo $$ > ready.$SLURM_JOB_ID
wait_for_file release.$SLURM_JOB_ID
"""


class SlurmPersonalitiesTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=2)
        cls.links = tempfile.mkdtemp(prefix="gantry-slurm-links-")
        cls.addClassCleanup(lambda: subprocess.run(["rm", "-rf", cls.links]))
        for name in SLURM_NAMES:
            os.symlink(cls.cluster.cli_bin, os.path.join(cls.links, name))
        # Jobs inherit the submitter's PATH: scontrol works inside them too.
        cls.env = dict(cls.cluster.env)
        cls.env["PATH"] = cls.links + os.pathsep + cls.env.get("PATH", "")
        cls.user = pwd.getpwuid(os.getuid()).pw_name

    def slurm(self, name, *args, check=True, env=None):
        result = subprocess.run(
            [os.path.join(self.links, name), *args], cwd=self.cluster.work_dir,
            env=env or self.env, capture_output=True, text=True, timeout=30)
        if check and result.returncode != 0:
            self.fail(f"{name} {' '.join(args)} exited {result.returncode}\n"
                      f"stdout: {result.stdout}\nstderr: {result.stderr}")
        return result

    def sbatch(self, *args):
        result = self.slurm("sbatch", "--parsable", *args)
        return int(result.stdout.strip())

    def waiting_job(self, name="waiter"):
        script = self.cluster.write_script("trap.sh", TRAP_USR1)
        job_id = self.sbatch("-J", name, script)
        self.cluster.wait_job(job_id, "RUNNING")
        self.cluster.wait_files([f"ready.{job_id}"])
        return job_id

    def test_sbatch_squeue_scontrol_sinfo(self):
        script = self.cluster.write_script("trap.sh", TRAP_USR1)
        submitted = self.slurm("sbatch", "-J", "personas", script).stdout
        self.assertRegex(submitted, r"^Submitted batch job \d+\n$")
        job_id = int(submitted.split()[-1])
        self.cluster.wait_job(job_id, "RUNNING")

        queue = self.slurm("squeue", "-u", self.user, "-o", "%i %T").stdout
        self.assertEqual(queue.splitlines()[0], "JOBID STATE")
        self.assertIn(f"{job_id} RUNNING", queue.splitlines())
        default = self.slurm("squeue").stdout.splitlines()
        self.assertEqual(default[0].split(),
                         ["JOBID", "PARTITION", "NAME", "USER", "ST", "TIME",
                          "NODES", "NODELIST(REASON)"])
        mine = [line.split() for line in default[1:]
                if line.split()[0] == str(job_id)]
        self.assertEqual(mine[0][2:5], ["personas", self.user[:8], "R"])
        ids = self.slurm("squeue", "-h", "-t", "R", "-j", str(job_id),
                         "-o", "%i").stdout
        self.assertEqual(ids, f"{job_id}\n")
        self.assertEqual(self.slurm("squeue", "-h", "-t", "PD", "-j",
                                    str(job_id)).stdout, "")
        # A letter squeue does not know is left out, and said so.
        odd = self.slurm("squeue", "-h", "-j", str(job_id), "-o", "%i %~")
        self.assertEqual(odd.stdout, f"{job_id} \n")
        self.assertIn("Invalid job format specification: ~", odd.stderr)

        show = self.slurm("scontrol", "show", "job", str(job_id)).stdout
        for field in (f"JobId={job_id}", "JobName=personas",
                      f"UserId={self.user}(", "JobState=RUNNING",
                      "NumNodes=1", "NumTasks=1", "TRES=cpu=", "WorkDir=",
                      "StdOut=", "Partition=main", "RunTime="):
            self.assertIn(field, show)
        self.assertRegex(show, r"NodeList=node0[12]\n")

        summary = self.slurm("sinfo").stdout.splitlines()
        self.assertEqual(summary[0].split(),
                         ["PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE",
                          "NODELIST"])
        rows = [line.split() for line in summary[1:]]
        self.assertEqual(sum(int(row[3]) for row in rows), 2)
        self.assertTrue(all(row[0] == "main*" and row[1] == "up"
                            for row in rows), rows)
        self.assertTrue({row[4] for row in rows} & {"mix", "alloc"}, rows)
        per_node = self.slurm("sinfo", "-N", "-h").stdout.splitlines()
        self.assertEqual(sorted(line.split()[0] for line in per_node),
                         ["node01", "node02"])
        node = self.slurm("scontrol", "show", "node", "node01").stdout
        self.assertIn("NodeName=node01", node)

        self.cluster.touch(f"release.{job_id}")
        self.cluster.wait_job(job_id, "COMPLETED")
        # Finished jobs show when asked for by id or state.
        done = self.slurm("squeue", "-h", "-j", str(job_id), "-o",
                          "%i %t").stdout
        self.assertEqual(done, f"{job_id} CD\n")

    def test_version(self):
        """--version (and sbatch's and srun's -V) print the version and exit
        0, before anything reaches the controller: scripts probe with it."""
        outputs = [self.slurm("sbatch", flag).stdout
                   for flag in ("--version", "-V")]
        outputs += [self.slurm("srun", flag).stdout
                    for flag in ("--version", "-V")]
        outputs.append(self.slurm("sbatch", "-J", "probe", "--version").stdout)
        outputs.append(self.cluster.cli("--version").stdout)
        for output in outputs:
            self.assertRegex(output, r"^gantry \d+\.\d+\.\d+\n$")
        for program in ("daemon/gantryd", "agent/gantry-agent"):
            result = subprocess.run(
                [os.path.join(gantry_cluster.build_dir(), program),
                 "--version"], capture_output=True, text=True, timeout=30,
                check=True)
            self.assertRegex(result.stdout,
                             r"^gantry(d|-agent) \d+\.\d+\.\d+\n$")
        # After the script, -V is the script's own argument.
        script = self.cluster.write_script("args.sh", """#!/bin/bash
echo "$@" > args.$SLURM_JOB_ID
""")
        job_id = self.sbatch(script, "-V")
        self.cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(self.cluster.read(f"args.{job_id}").strip(), "-V")

    def test_scontrol_show_hostnames(self):
        listed = self.slurm("scontrol", "show", "hostnames", "node[01-03]")
        self.assertEqual(listed.stdout, "node01\nnode02\nnode03\n")
        env = dict(self.env, SLURM_JOB_NODELIST="gpu[7-8],cpu01")
        first = subprocess.run(
            "scontrol show hostnames $SLURM_JOB_NODELIST | head -n1",
            shell=True, env=env, capture_output=True, text=True, timeout=30)
        self.assertEqual(first.stdout, "gpu7\n")
        bad = self.slurm("scontrol", "show", "hostnames", "node[3-1]",
                         check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("error", bad.stderr)

        # The rendezvous idiom of multi-node training scripts, inside a job.
        script = self.cluster.write_script("head.sh", """#!/bin/bash
scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1 > head.$SLURM_JOB_ID
""")
        job_id = self.sbatch("-N", "2", script)
        self.cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(self.cluster.read(f"head.{job_id}").strip(), "node01")

    def test_scancel_signal_reaches_the_ranks_and_the_job_goes_on(self):
        job_id = self.waiting_job()
        # As in Slurm, the batch script gets it with -b (plain --signal goes
        # to the step tasks; test_node_selection covers both).
        self.slurm("scancel", "--signal=USR1", "-b", str(job_id))
        self.assertEqual(self.cluster.wait_files([f"usr1.{job_id}"]),
                         {f"usr1.{job_id}": "got USR1"})
        self.assertEqual(self.cluster.job(job_id)["state"], "RUNNING")
        self.cluster.touch(f"release.{job_id}")
        self.cluster.wait_job(job_id, "COMPLETED")
        # Nothing to signal in a finished job.
        again = self.slurm("scancel", "-s", "USR1", str(job_id), check=False)
        self.assertNotEqual(again.returncode, 0)
        self.assertIn("not running", again.stderr)
        bad = self.slurm("scancel", "--signal=USR9", str(job_id), check=False)
        self.assertIn("invalid signal", bad.stderr)

    def test_scancel_filters(self):
        keep = self.waiting_job("keep")
        drop = self.waiting_job("drop")
        self.slurm("scancel", "-n", "drop")
        self.cluster.wait_job(drop, "CANCELLED", timeout=10)
        self.assertEqual(self.cluster.job(keep)["state"], "RUNNING")
        self.slurm("scancel", "-u", self.user)
        self.cluster.wait_job(keep, "CANCELLED", timeout=10)
        nothing = self.slurm("scancel", check=False)
        self.assertNotEqual(nothing.returncode, 0)
        self.assertIn("--me", nothing.stderr)

    def test_what_is_not_offered_says_so(self):
        # srun outside a job allocates one (tests/integration/
        # test_interactive.py); what it does not offer, it names.
        srun = self.slurm("srun", "--container-image=ubuntu", "hostname",
                          check=False)
        self.assertNotEqual(srun.returncode, 0)
        self.assertIn("containers (pyxis", srun.stderr)
        update = self.slurm("scontrol", "update", "nodename=node01",
                            check=False)
        self.assertNotEqual(update.returncode, 0)
        self.assertIn("State=", update.stderr)
        reboot = self.slurm("scontrol", "reboot", "node01", check=False)
        self.assertNotEqual(reboot.returncode, 0)
        self.assertIn("scontrol reboot is not supported", reboot.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
