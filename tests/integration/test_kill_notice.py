#!/usr/bin/env python3
"""Slurm's cancel notice and SLURM_TASK_PID.

When a job is cancelled or runs past its time limit, Slurm's slurmstepd
writes "slurmstepd: error: *** JOB N ON NODE CANCELLED AT TIME ***" (with
" DUE TO TIME LIMIT" for a time limit) into the batch script's stderr, and
"*** STEP N.S ..." into a step's, which srun forwards; scripts grep for
these lines. A requeue or a restart after a node failure writes none. The
line is appended with the job user's credentials: an output file the user
replaced with a link to a file of root's stays untouched.

Every task's environment has SLURM_TASK_PID, the pid of the task process
itself: the batch script's, each srun task's, an srun --pty task's."""

import datetime
import os
import pty
import pwd
import re
import secrets
import select
import signal
import subprocess
import time
import unittest

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, wait_for

TIME = r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)"


def job_line(job_id, node, time_limit=False):
    why = " DUE TO TIME LIMIT" if time_limit else ""
    return re.compile(rf"^slurmstepd: error: \*\*\* JOB {job_id} ON {node} "
                      rf"CANCELLED AT {TIME}{why} \*\*\*$", re.M)


def step_line(job_id, step, node):
    return re.compile(rf"^slurmstepd: error: \*\*\* STEP {job_id}\.{step} ON "
                      rf"{node} CANCELLED AT {TIME} \*\*\*$", re.M)


class KillNoticeTest(ClusterTestCase):

    def read_when(self, cluster, name, pattern, timeout=15):
        """The file's text once `pattern` is in it."""
        def found():
            path = cluster.path(name)
            return os.path.exists(path) and pattern.search(
                cluster.read(name))
        wait_for(found, timeout, f"{pattern.pattern} in {name}")
        return cluster.read(name)

    def assert_recent_local_time(self, text):
        stamp = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S")
        # Local time, as Slurm's slurm_make_time_str writes it.
        self.assertLess(abs((datetime.datetime.now() - stamp).total_seconds()),
                        120, text)

    def test_scancel_writes_slurms_job_line_into_the_output(self):
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script(
            "cancelme.sh", "#!/bin/bash\necho started\necho $$ > started.$SLURM_JOB_ID\n"
            "sleep 60\n")
        job_id = cluster.submit(script, "-o", "cancel-%j.out", per_task=False)
        cluster.wait_files([f"started.{job_id}"])
        cluster.cli("cancel", str(job_id))
        cluster.wait_job(job_id, "CANCELLED")
        pattern = job_line(job_id, "node01")
        text = self.read_when(cluster, f"cancel-{job_id}.out", pattern)
        self.assertEqual(len(pattern.findall(text)), 1, text)
        self.assertTrue(text.startswith("started\n"), text)
        self.assert_recent_local_time(pattern.search(text).group(1))
        self.assertNotIn("TIME LIMIT", text)

    def test_scancel_of_a_job_with_a_running_step_writes_one_job_line(self):
        cluster = self.start_cluster(agents=1)
        cluster.add_slurm_commands()
        script = cluster.write_script("withstep.sh", """#!/bin/bash
srun -n1 bash -c 'echo $$ > step.$SLURM_JOB_ID; sleep 60'
""")
        job_id = cluster.submit(script, "-o", "both-%j.out", per_task=False)
        cluster.wait_files([f"step.{job_id}"])
        cluster.cli("cancel", str(job_id))
        cluster.wait_job(job_id, "CANCELLED")
        pattern = job_line(job_id, "node01")
        text = self.read_when(cluster, f"both-{job_id}.out", pattern)
        self.assertEqual(len(pattern.findall(text)), 1, text)
        # The step's line goes to its srun, which forwards it into this file
        # unless the kill of the script's process group ends srun first, so
        # it may be missing here; never twice.
        self.assertLessEqual(len(step_line(job_id, 0, "node01").findall(text)),
                             1, text)

    def test_time_limit_writes_the_due_to_time_limit_line(self):
        cluster = self.start_cluster(agents=1)
        script = cluster.write_script(
            "slow.sh", "#!/bin/bash\nsleep 60\n")
        job_id = cluster.submit(script, "--time=0:02", "-o", "slow-%j.out",
                                "-e", "slow-%j.err", per_task=False)
        cluster.wait_job(job_id, "TIMEOUT", timeout=15)
        pattern = job_line(job_id, "node01", time_limit=True)
        # Into the stderr file, as slurmstepd's own stderr is the script's.
        text = self.read_when(cluster, f"slow-{job_id}.err", pattern)
        self.assertEqual(len(pattern.findall(text)), 1, text)
        self.assertNotIn("CANCELLED", cluster.read(f"slow-{job_id}.out"))

    def test_requeue_and_node_failure_restart_write_nothing(self):
        cluster = self.start_cluster(agents=3, node_timeout=2.0)
        cluster.add_slurm_commands()
        script = cluster.write_script("attempts.sh", "#!/bin/bash\n" + WAIT_FOR_FILE + """
echo "$SLURMD_NODENAME" > "ran.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$SLURM_PROCID"
wait_for_file release
""")
        job_id = cluster.submit(script, "-N", "2", "-o", "restart-%j.out")
        cluster.wait_files([f"ran.{job_id}.1.0", f"ran.{job_id}.1.1"])
        # A node failure: the job restarts on healthy nodes.
        node = "node02" if cluster.job(job_id)["nodelist"] != "node[01,03]" \
            else "node03"
        cluster.kill_agent(node)
        cluster.wait_files([f"ran.{job_id}.2.0", f"ran.{job_id}.2.1"],
                           timeout=20)
        # An explicit requeue: stopped, pending, and run again.
        subprocess.run(["scontrol", "requeue", str(job_id)], env=cluster.env,
                       check=True, capture_output=True, text=True)
        cluster.wait_files([f"ran.{job_id}.3.0", f"ran.{job_id}.3.1"],
                           timeout=20)
        cluster.touch("release")
        job = cluster.wait_job(job_id, "COMPLETED", timeout=20)
        self.assertEqual(job["attempt"], 3)
        # Each attempt's rank 0 opened it: a notice would have landed here.
        text = cluster.read(f"restart-{job_id}.out")
        self.assertNotIn("CANCELLED AT", text)
        self.assertNotIn("slurmstepd", text)

    def test_srun_step_cancelled_gets_the_step_line_on_its_stderr(self):
        cluster = self.start_cluster(agents=1)
        cluster.add_slurm_commands()
        running = subprocess.Popen(
            ["bash", "-c", "exec srun -n1 bash -c "
             "'echo $SLURM_JOB_ID > step.job; sleep 60'"],
            cwd=cluster.work_dir, env=cluster.env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            job_id = int(cluster.wait_files(["step.job"])["step.job"])
            cluster.cli("cancel", str(job_id))
            out, err = running.communicate(timeout=30)
        finally:
            if running.poll() is None:
                running.kill()
                running.communicate()
        self.assertRegex(err, step_line(job_id, 0, "node01"))
        cluster.wait_job(job_id, "CANCELLED")

    def test_ctrl_c_of_srun_writes_the_step_line_once(self):
        """srun's own cancel of its step and then of its job: one line."""
        cluster = self.start_cluster(agents=1)
        cluster.add_slurm_commands()
        running = subprocess.Popen(
            ["bash", "-c", "exec srun -n1 bash -c "
             "'echo $SLURM_JOB_ID > ctrlc.job; sleep 60'"],
            cwd=cluster.work_dir, env=cluster.env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            job_id = int(cluster.wait_files(["ctrlc.job"])["ctrlc.job"])
            running.send_signal(signal.SIGINT)
            out, err = running.communicate(timeout=30)
        finally:
            if running.poll() is None:
                running.kill()
                running.communicate()
        self.assertEqual(len(step_line(job_id, 0, "node01").findall(err)), 1,
                         err)
        cluster.wait_job(job_id, "CANCELLED")

    def test_task_pid_is_the_task_process_itself(self):
        cluster = self.start_cluster(agents=2)
        cluster.add_slurm_commands()
        script = cluster.write_script("pids.sh", """#!/bin/bash
echo "batch $SLURM_TASK_PID $$" > taskpid.$SLURM_JOB_ID
srun -N2 -n4 bash -c 'echo "task $SLURM_PROCID $SLURM_TASK_PID $$"' \\
  >> taskpid.$SLURM_JOB_ID
""")
        # An inherited value must not leak through --export=ALL.
        cluster.env["SLURM_TASK_PID"] = "1"
        try:
            job_id = cluster.submit(script, "-N", "2", per_task=False)
        finally:
            cluster.env.pop("SLURM_TASK_PID")
        cluster.wait_job(job_id, "COMPLETED", timeout=30)
        lines = cluster.read(f"taskpid.{job_id}").splitlines()
        self.assertEqual(len(lines), 5, lines)
        tasks = set()
        for line in lines:
            words = line.split()
            self.assertEqual(words[-1], words[-2], line)
            self.assertNotEqual(words[-1], "1", line)
            if words[0] == "task":
                tasks.add(words[1])
        self.assertEqual(tasks, {"0", "1", "2", "3"})

    def test_task_pid_in_a_pty_task(self):
        cluster = self.start_cluster(agents=1)
        cluster.add_slurm_commands()
        pid, master = pty.fork()
        if pid == 0:
            try:
                os.chdir(cluster.work_dir)
                os.execvpe("srun", ["srun", "--pty", "-n1", "bash", "-c",
                                    'echo "pty=$SLURM_TASK_PID self=$$"'],
                           cluster.env)
            finally:
                os._exit(127)
        seen = ""
        answer = re.compile(r"pty=(\d+) self=(\d+)[\r\n]")
        try:
            deadline = time.monotonic() + 30
            while not answer.search(seen):
                if time.monotonic() > deadline:
                    self.fail(f"no answer from srun --pty: {seen!r}")
                ready, _, _ = select.select([master], [], [], 1)
                if not ready:
                    continue
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: srun exited and closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk.decode(errors="replace")
        finally:
            _, status = os.waitpid(pid, 0)
            os.close(master)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, seen)
        match = answer.search(seen)
        self.assertIsNotNone(match, seen)
        self.assertEqual(match.group(1), match.group(2), seen)


@unittest.skipUnless(os.geteuid() == 0, "needs root to create a user")
class PlantedLinkTest(ClusterTestCase):
    """The notice is written as the job's user, never as root."""

    def setUp(self):
        self.user = f"gtnote{secrets.token_hex(4)}"
        subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", self.user],
                       check=True, capture_output=True)
        self.addCleanup(subprocess.run, ["userdel", self.user],
                        capture_output=True)
        self.entry = pwd.getpwnam(self.user)

    def test_a_link_to_roots_file_planted_as_the_output_is_not_written(self):
        cluster = self.start_cluster(agents=1)
        os.chmod(cluster.dir, 0o755)
        os.chmod(cluster.work_dir, 0o755)
        home = cluster.path(f"user-{self.user}")
        os.makedirs(home)
        os.chown(home, self.entry.pw_uid, self.entry.pw_gid)
        precious = cluster.path("root-owned.txt")
        with open(precious, "w") as f:
            f.write("root's own\n")
        os.chmod(precious, 0o644)
        # The job swaps its own output file for a link to root's file.
        script = cluster.write_script("plant.sh", f"""#!/bin/bash
rm -f planted.out
ln -s {precious} planted.out
touch planted
sleep 60
""", directory=home)
        os.chown(script, self.entry.pw_uid, self.entry.pw_gid)
        job_id = cluster.submit(script, "-o", "planted.out", cwd=home,
                                uid=self.entry.pw_uid, per_task=False)
        wait_for(lambda: os.path.exists(os.path.join(home, "planted")), 20,
                 "the job to plant its link")
        cluster.cli("cancel", str(job_id))
        cluster.wait_job(job_id, "CANCELLED")
        agent_log = cluster.agents["node01"]
        wait_for(lambda: "cancel notice" in agent_log.log_text(), 10,
                 "the agent to report the refused notice")
        with open(precious) as f:
            self.assertEqual(f.read(), "root's own\n")
        self.assertIn("Permission denied", agent_log.log_text())


if __name__ == "__main__":
    gantry_cluster.main()
