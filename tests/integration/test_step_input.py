#!/usr/bin/env python3
"""srun -i/--input as Slurm's (man srun, "IO Redirection"): by default
srun's stdin goes to every task, and each reads end of file when it ends;
-i none gives them /dev/null, -i TASKID gives srun's stdin to that task
alone, a file name is read on srun's host and sent to every task, and a
pattern with %t/%n/%N is a file each task opens on its node as the job's
user. Outside a job, inside a batch job and inside salloc."""

import os
import pwd
import re
import signal
import subprocess
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase

OTHER_USER = "nobody"


class StepInputTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=2)
        cls.cluster.add_slurm_commands()

    def sh(self, command, input=None, timeout=40, cwd=None, user=None):
        """A shell command line with the Slurm names on the PATH; stdin is
        `input` (text), else /dev/null."""
        identity = {}
        if user is not None:
            identity = {"user": user.pw_uid, "group": user.pw_gid,
                        "extra_groups": []}
        return subprocess.run(
            ["bash", "-c", command], cwd=cwd or self.cluster.work_dir,
            env=self.cluster.env, input=input if input is not None else "",
            capture_output=True, text=True, timeout=timeout, **identity)

    def test_stdin_goes_to_every_task_then_ends(self):
        result = self.sh("srun -N2 -n2 -l cat", input="hi\nthere\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(result.stdout.splitlines()),
                         ["0: hi", "0: there", "1: hi", "1: there"])
        # A pipe into srun, as a shell user writes it.
        result = self.sh("echo hi | srun -n2 cat")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "hi\nhi\n")
        # More than any buffer on the way holds, to tasks on both nodes.
        result = self.sh("seq 1 200000 | srun -N2 -n2 -l wc -l")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(result.stdout.split("\n")[:2]),
                         ["0: 200000", "1: 200000"])
        # "all" says the same; a task that reads nothing does not hold up
        # the one that does.
        result = self.sh("srun -n2 -l -i all bash -c "
                         "'[ $SLURM_PROCID = 0 ] && exit 0; cat'",
                         input="only one reads\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "1: only one reads\n")

    def test_open_stdin_is_relayed_as_it_comes_and_ctrl_c_stops(self):
        srun = subprocess.Popen(
            ["srun", "-n1", "bash", "-c", "echo started; cat"],
            cwd=self.cluster.work_dir, env=self.cluster.env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, bufsize=1)
        try:
            self.assertEqual(srun.stdout.readline(), "started\n")
            # Line by line, while srun's stdin stays open.
            srun.stdin.write("first\n")
            srun.stdin.flush()
            self.assertEqual(srun.stdout.readline(), "first\n")
            # Interrupted with its stdin still open: it does not wait for
            # the end of it.
            srun.send_signal(signal.SIGINT)
            srun.wait(timeout=20)
            err = srun.stderr.read()
        finally:
            if srun.poll() is None:
                srun.kill()
                srun.wait()
            srun.stdin.close()
            srun.stdout.close()
            srun.stderr.close()
        self.assertEqual(srun.returncode, 128 + signal.SIGTERM, err)
        self.assertIn("srun: interrupted; stopping step", err)
        self.assertIn("task 0: Killed by signal 15", err)

    def test_none_and_one_task(self):
        result = self.sh("srun -n2 -i none bash -c 'echo got=$(cat)'",
                         input="ignored\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "got=\ngot=\n")
        result = self.sh("srun -N2 -n2 -l --input=1 bash -c "
                         "'echo got=$(cat)'", input="for one\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(result.stdout.splitlines()),
                         ["0: got=", "1: got=for one"])
        # A task the step does not have; --pty's terminal is task 0's.
        result = self.sh("srun -n2 -i 5 cat")
        self.assertEqual(result.returncode, 1)
        self.assertIn("--input=5: the step has no task 5 (its tasks are 0-1)",
                      result.stderr)
        result = self.sh("srun --pty -i 1 bash")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(
            result.stderr,
            "srun: error: --input=1 cannot be combined with --pty: task 0 "
            "reads your terminal and the other tasks read nothing\n")

    def test_files(self):
        cluster = self.cluster
        for task, word in enumerate(("zero", "one", "two")):
            with open(cluster.path(f"in.{task}"), "w") as f:
                f.write(f"{word}\n")
        with open(cluster.path("shared.txt"), "w") as f:
            f.write("for all\n")
        # One file per task, opened on the task's node.
        result = self.sh("srun -N2 -n3 -l -i 'in.%t' cat")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(result.stdout.splitlines()),
                         ["0: zero", "1: one", "2: two"])
        # A plain file name: read here and sent to every task.
        result = self.sh("srun -n2 -i shared.txt cat", input="not this\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "for all\nfor all\n")
        # Missing: the step fails saying which file on which node.
        result = self.sh("srun -N2 -n3 -i 'in.%1n%t' cat")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("srun: error: node01: task 0: cannot open input file "
                      "in.00: No such file or directory", result.stderr)
        self.assertIn("srun: error: node02: task 2: cannot open input file "
                      "in.12: No such file or directory", result.stderr)
        self.assertIn("task 1: cannot open input file in.01", result.stderr)
        result = self.sh("srun -n1 -i missing-%j.txt cat")
        self.assertEqual(result.returncode, 1)
        job_id = re.search(r"missing-(\d+)\.txt", result.stderr).group(1)
        self.assertIn(f"srun: error: cannot open input file missing-{job_id}"
                      ".txt: No such file or directory", result.stderr)
        self.assertEqual(cluster.wait_job(int(job_id), "FAILED")["state"],
                         "FAILED")

    def test_inside_a_batch_job_and_salloc(self):
        cluster = self.cluster
        script = cluster.write_script(
            "piped.sh", "#!/bin/bash\n"
            "echo hi | srun -n2 cat\n"
            # The script's own stdin is /dev/null: the tasks read its end.
            "srun -n2 bash -c 'echo got=$(cat)'\n"
            "srun -n2 -l -i 1 bash -c 'echo one=$(cat)' <<< 'one only'\n")
        job_id = cluster.submit(script, "-n2", "-o", "piped.out",
                                per_task=False)
        cluster.wait_job(job_id, "COMPLETED", timeout=40)
        lines = cluster.read("piped.out").splitlines()
        self.assertEqual(lines[:4], ["hi", "hi", "got=", "got="])
        self.assertEqual(sorted(lines[4:]), ["0: one=", "1: one=one only"])

        result = self.sh("salloc -n2 bash -c 'echo from salloc | srun cat'")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "from salloc\nfrom salloc\n")

    @unittest.skipUnless(os.geteuid() == 0, "needs root to act as a user")
    def test_input_files_are_opened_as_the_user(self):
        """The agent is root; the user's task must not read what the user
        may not."""
        cluster = self.cluster
        other = pwd.getpwnam(OTHER_USER)
        os.chmod(cluster.dir, 0o755)
        os.chmod(cluster.work_dir, 0o755)
        home = cluster.path("home-input")
        os.makedirs(home)
        os.chown(home, other.pw_uid, other.pw_gid)
        secret = os.path.join(home, "secret.0")
        with open(secret, "w") as f:
            f.write("root only\n")
        os.chmod(secret, 0o600)
        readable = os.path.join(home, "open.0")
        with open(readable, "w") as f:
            f.write("anyone\n")
        os.chmod(readable, 0o644)
        result = self.sh("srun -n1 -i 'open.%t' cat", cwd=home, user=other)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "anyone\n")
        result = self.sh("srun -n1 -i 'secret.%t' cat", cwd=home, user=other)
        self.assertNotEqual(result.returncode, 0)
        self.assertNotIn("root only", result.stdout)
        self.assertIn("task 0: cannot open input file secret.0: Permission "
                      "denied", result.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
