#!/usr/bin/env python3
"""`gantry status`, the admin's one screen, on a live cluster: gantryd and two
agents that describe 4xH100 servers (hwloc XML, GPUs looked up in a fake
sysfs tree, as in test_node_health.py). One job holds two GPUs, one waits
for resources, one fails twice (restarted once, then FAILED), a node is
drained by the admin and the other loses a GPU. The screen and --json say
so; piped output has no escape codes, a terminal gets colour unless
NO_COLOR, and --color overrides both. drain and resume work and every
command's --help lists its options."""

import os
import pty
import subprocess

from gantry_cluster import (H100_XML, ClusterTestCase, GantryCluster,
                            build_dir, h100_node_with_fake_sysfs, main,
                            pull_gpu, wait_for)

ESCAPE = "\x1b["


def run_in_terminal(argv, env):
    """Runs argv with stdout on a pseudo-terminal; returns what it wrote."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                   stdout=follower, stderr=subprocess.PIPE,
                                   env=env)
    finally:
        os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the writer is gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    _, stderr = process.communicate(timeout=30)
    if process.returncode != 0:
        raise AssertionError(f"{argv} exited {process.returncode}: {stderr!r}")
    return b"".join(chunks).decode(errors="replace")


class AdminStatusTest(ClusterTestCase):

    def start_gpu_cluster(self):
        if not os.path.exists(H100_XML):
            self.skipTest(f"shared data not found at {H100_XML}")
        cluster = GantryCluster(agents=2, label=self.id())
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        self.sysfs = {}
        for name in ("node01", "node02"):
            self.sysfs[name] = h100_node_with_fake_sysfs(cluster, name)
        return cluster.start()

    def status_text(self, cluster, *args, env=None):
        result = subprocess.run([cluster.cli_bin, "status", *args],
                                env=env or cluster.env, capture_output=True,
                                text=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def test_status_shows_the_cluster_as_it_is(self):
        c = self.start_gpu_cluster()

        # A job that fails the same way twice: restarted once, then FAILED.
        failing = c.write_script("fail.sh", "#!/bin/bash\nexit 3\n")
        # Asks for restarts after its own failures (--max-restarts).
        failed_id = c.submit(failing, "-J", "broken", "--max-restarts=3")
        c.wait_job(failed_id, "FAILED")

        # Two GPUs held on one node, and a job waiting for all eight.
        holder = c.write_script("hold.sh", "#!/bin/bash\nsleep 300\n")
        holder_id = c.submit(holder, "--gpus-per-node=2")
        busy = c.wait_job(holder_id, "RUNNING")["nodelist"]
        other = "node02" if busy == "node01" else "node01"
        big = c.write_script("big.sh", "#!/bin/bash\ntrue\n")
        waiting_id = c.submit(big, "-N", "2", "--gpus-per-node=4")
        wait_for(lambda: c.job(waiting_id)["reason"] == "Resources", 10,
                 "the big job to wait for resources")

        c.cli("drain", other, "--reason", "maintenance window")
        self.assertTrue(c.nodes()[other]["drained"])

        status = wait_for(
            lambda: (lambda s: s if s["gpu_utilization"]["series"] else None)(
                c.status()), 12, "a utilization sample with GPUs")
        self.assertTrue(status["version"])
        self.assertGreaterEqual(status["uptime_seconds"], 0)
        self.assertGreater(status["state_size_bytes"], 0)
        self.assertGreater(status["commit"]["sampled"], 0)
        self.assertGreater(status["commit"]["median_seconds"], 0)
        nodes = status["nodes"]
        self.assertEqual((nodes["total"], nodes["up"], nodes["mixed"],
                          nodes["drained"], nodes["idle"], nodes["down"]),
                         (2, 2, 1, 1, 0, 0))
        self.assertEqual(status["gpus"], {"total": 8, "allocated": 2,
                                          "idle": 2, "down": 4})
        self.assertAlmostEqual(status["gpu_utilization"]["now"], 0.25)
        self.assertEqual(status["gpu_utilization"]["bucket_seconds"], 60)
        jobs = status["jobs"]
        self.assertEqual((jobs["pending"], jobs["running"], jobs["failed"]),
                         (1, 1, 1))
        # With the other node drained, too few of the nodes that could
        # hold it are up: it waits for a node to be resumed.
        self.assertEqual(status["pending_reasons"][0]["reason"], "NodeDown")
        self.assertEqual(status["pending_reasons"][0]["count"], 1)
        self.assertEqual(status["pending_reasons"][0]["example_job_id"],
                         waiting_id)
        self.assertIn({"node": other, "state": "drained",
                       "reason": "maintenance window", "busy": False},
                      status["node_issues"])
        failures = [(f["kind"], f["job_id"], f["attempt"], f["reason"])
                    for f in status["recent_failures"] if f["job_id"]]
        self.assertEqual(failures,
                         [("job_failed", failed_id, 2, "NonZeroExitCode"),
                          ("job_restarted", failed_id, 1, "NonZeroExitCode")])
        self.assertIn(("node_drained", other, "maintenance window"),
                      [(f["kind"], f["nodes"], f["detail"])
                       for f in status["recent_failures"]])
        self.assertEqual(status["last_hour"]["job_failures"], 2)
        self.assertEqual(status["last_hour"]["restarts"], 1)

        # Piped: plain text, every topic on its line.
        text = self.status_text(c)
        self.assertNotIn(ESCAPE, text)
        for expected in (
                "Controller   gantryd ",
                "Nodes        2 total: 1 mixed, 1 drained\n",
                "GPUs         8 total: 2 allocated, 2 idle, 4 down\n",
                "Utilization  25% allocated now",
                "Jobs         1 pending, 1 running, 1 failed\n",
                f"Pending      1 NodeDown  (job {waiting_id}",
                "Fabric       ",
                f"Attention    {other}  drained",
                "maintenance window\n",
                "Failures     last hour: 2 job failures (1 restarted), "
                "0 node failures\n",
                f"failed     job {failed_id} attempt 2 on ",
                f"restarted  job {failed_id} attempt 1 on "):
            self.assertIn(expected, text)

        # Colour: on a terminal unless NO_COLOR; --color decides over both.
        on_tty = run_in_terminal([c.cli_bin, "status"], c.env)
        self.assertIn(ESCAPE, on_tty)
        self.assertIn("Nodes", on_tty)
        quiet_env = dict(c.env, NO_COLOR="1")
        self.assertNotIn(ESCAPE, run_in_terminal([c.cli_bin, "status"],
                                                 quiet_env))
        self.assertNotIn(ESCAPE, run_in_terminal(
            [c.cli_bin, "status", "--color=never"], c.env))
        self.assertIn(ESCAPE, self.status_text(c, "--color=always",
                                               env=quiet_env))
        bad = c.cli("status", "--color=sometimes", check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("--color", bad.stderr)

        # A GPU vanishes under the running job: its node is degraded, the
        # job restarted; with the other node drained it waits, and runs
        # again once the admin resumes that node.
        pull_gpu(self.sysfs[busy], 3)
        wait_for(lambda: c.nodes()[busy]["health_problems"], 10,
                 f"{busy} to report the lost GPU")
        status = wait_for(
            lambda: (lambda s: s if any(
                f["kind"] == "job_restarted" and f["job_id"] == holder_id
                for f in s["recent_failures"]) else None)(c.status()),
            10, "the holder's restart in the status")
        self.assertEqual(status["nodes"]["degraded"], 1)
        self.assertEqual(status["fabric"]["degraded_nodes"],
                         [{"node": busy,
                           "reason": "GPU 3 (0000:db:00.0) is gone"}])
        self.assertEqual(status["last_hour"]["node_failures"], 1)
        kinds = [(f["kind"], f["nodes"]) for f in status["recent_failures"]]
        self.assertIn(("node_degraded", busy), kinds)
        # The drain that came with the degradation is not listed twice.
        self.assertNotIn(("node_drained", busy), kinds)
        text = self.status_text(c)
        self.assertIn(f"{busy}  degraded", text)
        self.assertIn("GPU 3 (0000:db:00.0) is gone", text)

        c.cli("resume", other)
        self.assertFalse(c.nodes()[other]["drained"])
        job = c.wait_job(holder_id, "RUNNING")
        self.assertEqual(job["nodelist"], other)
        c.cli("cancel", str(holder_id), str(waiting_id))

    def test_help_lists_every_option(self):
        # No cluster needed: --help never reaches the controller.
        cli = os.path.join(build_dir(), "cli", "gantry")
        for command, options in (("status", ["--json", "--color"]),
                                 ("drain", ["--reason"]),
                                 ("resume", [])):
            result = subprocess.run([cli, command, "--help"],
                                    capture_output=True, text=True, timeout=30)
            self.assertEqual(result.returncode, 0, result.stderr)
            for option in options + ["--help"]:
                self.assertIn(option, result.stdout, f"{command} --help")
        missing = subprocess.run([cli, "drain", "node01"], capture_output=True,
                                 text=True, timeout=30)
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn("--reason", missing.stderr)


if __name__ == "__main__":
    main()
