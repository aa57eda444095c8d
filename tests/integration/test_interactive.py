#!/usr/bin/env python3
"""Interactive allocations as a Slurm user makes them: srun outside a job
allocates one, runs the step on it and ends it with the step's status
(waiting for resources with Slurm's messages, Ctrl-C cancelling it), and
salloc runs a command here with the job's SLURM_* variables so that srun
inside uses the allocation, relinquishing it when the command exits.
Under the Slurm names and the gantry ones, with Slurm-style errors."""

import fcntl
import os
import pty
import re
import select
import signal
import socket
import struct
import subprocess
import termios
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase, wait_for


class _Screen:
    """What a terminal shows: reads the master side of a pseudo-terminal
    until a string (or pattern) appears."""

    def __init__(self, fd):
        self.fd = fd
        self.seen = ""
        self.offset = 0  # where the next expect starts looking

    def send(self, text):
        os.write(self.fd, text.encode())

    def expect(self, what, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            rest = self.seen[self.offset:]
            if isinstance(what, str):
                at = rest.find(what)
                end = at + len(what) if at >= 0 else -1
            else:
                match = what.search(rest)
                end = match.end() if match else -1
            if end >= 0:
                # The line(s) up to and including the match.
                found = rest[:end]
                self.offset += end
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"no {what!r} on the terminal; it shows:\n{self.seen}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise AssertionError(
                        f"terminal closed before {what!r}:\n{self.seen}")
                self.seen += chunk.decode(errors="replace")


def _wait_exit(pid, timeout):
    """The wait status of child `pid`, failing after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    raise AssertionError(f"process {pid} did not exit in {timeout} s")


class InteractiveTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=2)
        cls.cluster.add_slurm_commands()

    def sh(self, command, timeout=40, env=None, input=None):
        """Runs a shell command line in the cluster's work dir with the
        Slurm names on the PATH."""
        return subprocess.run(
            ["bash", "-c", command], cwd=self.cluster.work_dir,
            env={**self.cluster.env, **(env or {})}, input=input,
            capture_output=True, text=True, timeout=timeout)

    def spawn(self, command):
        return subprocess.Popen(
            ["bash", "-c", "exec " + command], cwd=self.cluster.work_dir,
            env=self.cluster.env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)

    def test_srun_outside_a_job_allocates_runs_and_ends_it(self):
        result = self.sh("srun -N2 -n4 -J hello bash -c "
                         "'echo \"$SLURM_PROCID/$SLURM_NTASKS "
                         "job=$SLURM_JOB_ID on $SLURMD_NODENAME\"'")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = sorted(result.stdout.splitlines())
        self.assertEqual(len(lines), 4, result.stdout)
        job_id = int(re.search(r"job=(\d+)", lines[0]).group(1))
        self.assertEqual(
            lines, [f"{t}/4 job={job_id} on node0{1 + t // 2}" for t in range(4)])
        # Nothing waited, so srun says nothing (as Slurm's).
        self.assertNotIn("queued", result.stderr)
        job = self.cluster.wait_job(job_id, "COMPLETED", timeout=10)
        self.assertEqual(job["name"], "hello")

        # The step's status is srun's and decides the job's end.
        failed = self.sh("gantry run -n1 bash -c "
                         "'echo $SLURM_JOB_ID; exit 3'")
        self.assertEqual(failed.returncode, 3, failed.stderr)
        self.assertIn("gantry run: error: node01: task 0: Exited with exit "
                      "code 3", failed.stderr)
        job = self.cluster.wait_job(int(failed.stdout), "FAILED", timeout=10)
        self.assertEqual(job["exit_code"], 3)

    def test_srun_waits_for_resources_and_ctrl_c_cancels(self):
        cluster = self.cluster
        # Both nodes held whole by a batch job.
        script = cluster.write_script("hold.sh", "#!/bin/sh\nsleep 60\n")
        blocker = cluster.submit(script, "-N2", "--exclusive", per_task=False)
        cluster.wait_job(blocker, "RUNNING")
        waiting = self.spawn("srun -N1 --exclusive bash -c "
                             "'echo ran in $SLURM_JOB_ID'")
        # Slurm's words, once it is clear that the job does not start.
        queued = self._read_stderr_until(waiting, "queued and waiting")
        job_id = int(re.search(r"srun: job (\d+) queued and waiting for "
                               r"resources", queued).group(1))
        self.assertEqual(cluster.job(job_id)["state"], "PENDING")
        cluster.cli("cancel", str(blocker))
        out, err = waiting.communicate(timeout=30)
        self.assertEqual(waiting.returncode, 0, err)
        self.assertIn(f"srun: job {job_id} has been allocated resources", err)
        self.assertEqual(out.strip(), f"ran in {job_id}")
        cluster.wait_job(job_id, "COMPLETED", timeout=10)

        # Ctrl-C while pending cancels the request.
        blocker = cluster.submit(script, "-N2", "--exclusive", per_task=False)
        cluster.wait_job(blocker, "RUNNING")
        waiting = self.spawn("srun -N1 true")
        queued = self._read_stderr_until(waiting, "queued and waiting")
        job_id = int(re.search(r"job (\d+) queued", queued).group(1))
        waiting.send_signal(signal.SIGINT)
        out, err = waiting.communicate(timeout=20)
        self.assertEqual(waiting.returncode, 1, err)
        self.assertIn(f"srun: Job allocation {job_id} has been revoked.", err)
        cluster.wait_job(job_id, "CANCELLED", timeout=10)

        # Ctrl-C while the step runs stops it and cancels the job.
        cluster.cli("cancel", str(blocker))
        running = self.spawn("srun -n1 bash -c "
                             "'echo $SLURM_JOB_ID > ctrl-c.job; sleep 60'")
        files = cluster.wait_files(["ctrl-c.job"], timeout=20)
        job_id = int(files["ctrl-c.job"])
        running.send_signal(signal.SIGINT)
        out, err = running.communicate(timeout=20)
        self.assertNotEqual(running.returncode, 0, err)
        cluster.wait_job(job_id, "CANCELLED", timeout=10)

    def _read_stderr_until(self, process, text, timeout=20):
        seen = ""
        deadline = time.monotonic() + timeout
        while text not in seen:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                self.fail(f"no '{text}' from the waiting srun: {seen!r}")
            line = process.stderr.readline()
            seen += line
        return seen

    def test_salloc_runs_a_command_with_the_job_and_srun_inside(self):
        result = self.sh(
            "salloc -N2 --ntasks-per-node=2 bash -c '"
            "echo job=$SLURM_JOB_ID jobid=$SLURM_JOBID "
            "nodes=$SLURM_JOB_NODELIST/$SLURM_NODELIST "
            "nnodes=$SLURM_JOB_NUM_NODES/$SLURM_NNODES ntasks=$SLURM_NTASKS "
            "host=$(hostname); "
            "srun bash -c \"echo step \\$SLURM_JOB_ID.\\$SLURM_STEP_ID "
            "task \\$SLURM_PROCID on \\$SLURMD_NODENAME\" | sort; "
            "srun -n1 true; echo second=$?; exit 5'")
        self.assertEqual(result.returncode, 5, result.stderr)
        first = result.stdout.splitlines()[0]
        job_id = int(re.search(r"job=(\d+)", first).group(1))
        self.assertEqual(
            first, f"job={job_id} jobid={job_id} nodes=node[01-02]/node[01-02] "
            f"nnodes=2/2 ntasks=4 host={os.uname().nodename}")
        steps = result.stdout.splitlines()[1:5]
        self.assertEqual(steps, [
            f"step {job_id}.0 task {t} on node0{1 + t // 2}" for t in range(4)])
        self.assertIn("second=0", result.stdout)
        self.assertIn(f"salloc: Granted job allocation {job_id}", result.stderr)
        self.assertIn(f"salloc: Relinquishing job allocation {job_id}",
                      result.stderr)
        job = self.cluster.wait_job(job_id, "FAILED", timeout=10)
        self.assertEqual(job["exit_code"], 5)

        # No command: the user's shell, reading what we type.
        shell = self.sh("gantry alloc -N1", env={"SHELL": "/bin/bash"},
                        input="echo in-shell $SLURM_JOB_ID\nexit 0\n")
        self.assertEqual(shell.returncode, 0, shell.stderr)
        job_id = int(shell.stdout.split()[1])
        self.assertIn(f"gantry alloc: Granted job allocation {job_id}",
                      shell.stderr)
        self.cluster.wait_job(job_id, "COMPLETED", timeout=10)

    def test_scancel_revokes_a_salloc(self):
        cluster = self.cluster
        holder = self.spawn("salloc -N1 bash -c "
                            "'echo $SLURM_JOB_ID > salloc.job; sleep 60'")
        files = cluster.wait_files(["salloc.job"], timeout=20)
        job_id = int(files["salloc.job"])
        cluster.cli("cancel", str(job_id))
        out, err = holder.communicate(timeout=20)
        self.assertIn(f"salloc: Job allocation {job_id} has been revoked.", err)
        self.assertEqual(holder.returncode, 128 + signal.SIGHUP, err)
        self.assertEqual(cluster.job(job_id)["state"], "CANCELLED")

    def test_srun_pty_gives_a_real_terminal(self):
        """srun --pty bash driven through a pseudo-terminal of our own, as
        a user's terminal emulator would."""
        env = {**self.cluster.env, "PS1": "pty-prompt$ ", "TERM": "dumb"}
        pid, master = pty.fork()
        if pid == 0:  # the user's terminal session
            try:
                os.chdir(self.cluster.work_dir)
                fcntl.ioctl(0, termios.TIOCSWINSZ,
                            struct.pack("HHHH", 40, 100, 0, 0))
                os.execvpe("srun", ["srun", "--pty", "-n1", "bash", "--norc",
                                    "--noprofile", "-i"], env)
            finally:
                os._exit(127)
        screen = _Screen(master)
        try:
            screen.expect("pty-prompt$ ")
            screen.send("tty; stty size; echo job=$SLURM_JOB_ID\r")
            tty_line = screen.expect(re.compile(r"job=(\d+)"))
            self.assertRegex(tty_line, r"/dev/pts/\d+")
            self.assertIn("40 100", tty_line)
            job_id = int(re.search(r"job=(\d+)", tty_line).group(1))
            self.assertEqual(self.cluster.job(job_id)["state"], "RUNNING")
            screen.expect("pty-prompt$ ")
            # The window grows: SIGWINCH to srun, TIOCSWINSZ on the node.
            fcntl.ioctl(master, termios.TIOCSWINSZ,
                        struct.pack("HHHH", 50, 132, 0, 0))
            time.sleep(0.3)
            screen.send("stty size\r")
            screen.expect("50 132")
            screen.expect("pty-prompt$ ")
            # Ctrl-C reaches the remote foreground process, not srun.
            screen.send("sleep 30\r")
            time.sleep(0.5)
            started = time.monotonic()
            screen.send("\x03")
            screen.expect("pty-prompt$ ")
            self.assertLess(time.monotonic() - started, 10)
            screen.send("echo status=$?\r")
            screen.expect("status=130")
            # Ctrl-Z stops it; the shell's job control sees that.
            screen.send("sleep 30\r")
            time.sleep(0.5)
            screen.send("\x1a")
            screen.expect("Stopped")
            screen.expect("pty-prompt$ ")
            screen.send("fg\r")
            screen.expect("sleep 30")
            time.sleep(0.3)
            screen.send("\x03")
            screen.expect("pty-prompt$ ")
            screen.send("exit 7\r")
            status = _wait_exit(pid, timeout=20)
            pid = 0
            self.assertEqual(os.waitstatus_to_exitcode(status), 7,
                             screen.seen)
            job = self.cluster.wait_job(job_id, "FAILED", timeout=10)
            self.assertEqual(job["exit_code"], 7)
        finally:
            if pid:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            os.close(master)

    def test_sattach_follows_a_running_step(self):
        cluster = self.cluster
        running = self.spawn(
            "srun -N2 -n2 bash -c 'echo $SLURM_JOB_ID > attach.job; "
            "for i in $(seq 1 30); do echo \"$SLURM_PROCID line $i\"; "
            "echo \"$SLURM_PROCID err $i\" >&2; sleep 0.1; done'")
        job_id = int(cluster.wait_files(["attach.job"], timeout=20)
                     ["attach.job"])
        labelled = self.spawn(f"sattach -l {job_id}.0")
        filtered = self.spawn(f"sattach --output-filter=1 {job_id}.0")
        out, err = running.communicate(timeout=30)
        attached = subprocess.CompletedProcess(
            "sattach", None, *labelled.communicate(timeout=30))
        attached.returncode = labelled.returncode
        only_one, _ = filtered.communicate(timeout=30)
        self.assertEqual(filtered.returncode, 0)
        self.assertTrue(only_one.endswith("1 line 30\n"), only_one)
        self.assertNotIn("0 line", only_one)
        self.assertEqual(running.returncode, 0, err)
        self.assertEqual(attached.returncode, 0, attached.stderr)
        self.assertIn(f"sattach: attached to step {job_id}.0",
                      attached.stderr)
        # What it saw is the end of what srun printed, task by task.
        for task in (0, 1):
            seen = [line[len(f"{task}: "):]
                    for line in attached.stdout.splitlines()
                    if line.startswith(f"{task}: ")]
            printed = [line for line in out.splitlines()
                       if line.startswith(f"{task} line")]
            self.assertTrue(seen, attached.stdout)
            self.assertEqual(seen, printed[-len(seen):])
            self.assertEqual(seen[-1], f"{task} line 30")
            self.assertIn(f"{task}: {task} err 30", attached.stderr)
        # Ended, unknown and malformed steps; Slurm-style option errors.
        for target, message in ((f"{job_id}.0", "is not running"),
                                (f"{job_id}.7", "is not running"),
                                ("12", "expected JOBID.STEPID")):
            result = self.sh(f"sattach {target}")
            self.assertEqual(result.returncode, 1)
            self.assertIn(message, result.stderr)
        result = self.sh("gantry attach --lable 1.1")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr.strip(),
                         "gantry attach: error: unrecognized option '--lable' "
                         "(did you mean --label?); try \"gantry attach "
                         "--help\"")
        self.assertIn("Usage: gantry attach", self.sh("sattach --help").stdout)
        result = self.sh("sattach --pty 1.1")
        self.assertEqual(result.returncode, 1)
        self.assertIn("sattach: error: --pty is not supported", result.stderr)

    def test_help_and_bad_options(self):
        for command, usage in (("srun --help", "Usage: gantry run"),
                               ("gantry run --help", "Usage: gantry run"),
                               ("salloc --help", "Usage: gantry alloc"),
                               ("gantry alloc -h", "Usage: gantry alloc")):
            result = self.sh(command)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn(usage, result.stdout)
        result = self.sh("srun --nodez=2 true")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr.strip(),
                         "srun: error: unrecognized option '--nodez' (did you "
                         "mean --nodes?); try \"srun --help\"")
        result = self.sh("srun --container-image=ubuntu:22.04 "
                         "--container-mounts=/a:/b true")
        self.assertEqual(result.returncode, 1)
        self.assertIn("srun: error: --container-image: containers (pyxis",
                      result.stderr)
        self.assertNotIn("unrecognized", result.stderr)
        result = self.sh("salloc --nodez=2 true")
        self.assertEqual(result.returncode, 1)
        self.assertIn("salloc: error:", result.stderr)
        self.assertIn("--nodez", result.stderr)
        self.assertIn("did you mean --nodes?", result.stderr)
        # A bad job option outside a job: nothing is submitted.
        before = len(self.cluster.cli_json("queue", "--all")["jobs"])
        result = self.sh("srun -t banana true")
        self.assertEqual(result.returncode, 1)
        self.assertIn("srun: error:", result.stderr)
        self.assertIn("--time", result.stderr)
        self.assertEqual(len(self.cluster.cli_json("queue", "--all")["jobs"]),
                         before)



class AuthNoneInteractiveTest(ClusterTestCase):
    """gantryd --auth=none (development): srun outside a job makes the
    allocation and runs its step as the same user whatever $USER says (the
    allocation was claimed for the password database's name, the step for
    $USER: "job 1 belongs to root")."""

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=1, auth="none")

    def test_srun_outside_a_job_whatever_user_says(self):
        env = dict(self.cluster.env)
        env.pop("USER", None)
        for user in (None, "nobody"):
            if user:
                env["USER"] = user
            with self.subTest(USER=user):
                result = subprocess.run(
                    [self.cluster.cli_bin, "run", "-n1", "echo", "ran"],
                    cwd=self.cluster.work_dir, env=env, capture_output=True,
                    text=True, timeout=60)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(result.stdout.strip(), "ran")
                self.assertNotIn("access denied", result.stderr)

    def test_step_output_listener_drops_silent_connections(self):
        # A connection that never sends its header is dropped within a few
        # seconds (it used to be kept for the whole step).
        step = subprocess.Popen(
            [self.cluster.cli_bin, "run", "-n1", "sleep", "30"],
            cwd=self.cluster.work_dir, env=self.cluster.env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            def listening_port():
                out = subprocess.run(["ss", "-Hltnp"], capture_output=True,
                                     text=True).stdout
                for line in out.splitlines():
                    if f"pid={step.pid}," in line:
                        return int(line.split()[3].rsplit(":", 1)[1])
                return None
            port = wait_for(listening_port, 30, "srun's output listener")
            silent = socket.create_connection(("127.0.0.1", port), timeout=10)
            silent.settimeout(30)
            started = time.monotonic()
            try:
                self.assertEqual(silent.recv(1), b"")
            except ConnectionResetError:
                pass
            self.assertLess(time.monotonic() - started, 25)
            silent.close()
        finally:
            step.kill()
            step.communicate(timeout=30)


if __name__ == "__main__":
    gantry_cluster.main()
