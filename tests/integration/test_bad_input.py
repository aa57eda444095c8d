#!/usr/bin/env python3
"""Bad requests get a clear error, a non-zero exit, and change nothing;
requests the cluster can never satisfy are refused at submit;
jobs that cannot start on the node fail with a reason instead of hanging."""

import os
import subprocess
import tempfile
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase

GOOD_SCRIPT = "#!/bin/bash\necho ran\n"


class BadInputTest(ClusterTestCase):
    # Every test leaves the cluster as it found it (no job left pending or
    # running), so they share one.

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=1)
        cls.good = cls.cluster.write_script("good.sh", GOOD_SCRIPT)

    def snapshot(self):
        """What a rejected submission must leave unchanged: every accepted
        submission takes the next job id, so it shows here."""
        return self.cluster.status()["next_job_id"]

    def assert_rejected(self, args, *expected_in_error, command="batch"):
        """`gantry COMMAND ARGS` exits non-zero, says all of
        `expected_in_error` on stderr, prints nothing on stdout, and
        submits nothing."""
        before = self.snapshot()
        result = self.cluster.cli(command, *args, check=False)
        self.assertNotEqual(result.returncode, 0, result)
        self.assertEqual(result.stdout, "")
        for text in expected_in_error:
            self.assertIn(text, result.stderr)
        self.assertEqual(self.snapshot(), before, "nothing was submitted")
        return result.stderr

    def test_unknown_sbatch_directive_is_named_and_nothing_is_submitted(self):
        script = self.cluster.write_script(
            "typo.sh", "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --nodez=2\necho ran\n")
        self.assert_rejected([script], "line 3", "--nodez", "did you mean --nodes")

    def test_unknown_command_line_option_is_named(self):
        self.assert_rejected(["--frobnicate", self.good], "--frobnicate")
        self.assert_rejected(["-Z", self.good], "unknown option -Z")

    def test_malformed_values_name_the_option_and_the_value(self):
        cases = [
            (["--nodes=two"], ['"two"', "--nodes"]),
            (["--time=abc"], ['"abc"', "--time"]),
            (["--time=1:75:00"], ['"1:75:00"', "--time", "minutes must be below 60"]),
            (["--mem=12Q"], ['"12Q"', "--mem"]),
            (["--gres=fpga:1"], ["fpga", "only gpu"]),
            (["--nodes=4-2"], ["--nodes", "maximum is below minimum"]),
            (["--max-restarts=many"], ['"many"', "--max-restarts"]),
            (["--max-restarts=1001"], ['"1001"', "--max-restarts", "at most 1000"]),
        ]
        for args, expected in cases:
            with self.subTest(args=args):
                self.assert_rejected(args + [self.good], *expected)

    def test_negative_and_zero_counts_are_rejected(self):
        cases = [
            (["-N", "-1"], ['"-1"', "--nodes", "positive integer"]),
            (["--ntasks=-4"], ['"-4"', "--ntasks", "positive integer"]),
            (["--nodes=0"], ['"0"', "--nodes", "positive integer"]),
            (["--cpus-per-task=0"], ['"0"', "--cpus-per-task"]),
            (["--ntasks-per-node=-2"], ['"-2"', "--ntasks-per-node"]),
            (["--max-restarts=-1"], ['"-1"', "--max-restarts"]),
        ]
        for args, expected in cases:
            with self.subTest(args=args):
                self.assert_rejected(args + [self.good], *expected)

    def test_inconsistent_task_counts_are_rejected_by_the_controller(self):
        self.assert_rejected(["-N", "2", "-n", "1", self.good],
                             "--ntasks=1 is fewer than --nodes=2")
        self.assert_rejected(["-N", "2", "-n", "5", "--ntasks-per-node=2", self.good],
                             "--ntasks=5 does not fit")

    def test_missing_script_file_is_rejected(self):
        self.assert_rejected([self.cluster.path("no-such-script.sh")],
                             "unable to open file", "no-such-script.sh")

    def test_script_without_interpreter_line_is_rejected(self):
        script = self.cluster.write_script("plain.sh", "echo no shebang\n")
        self.assert_rejected([script], "#!")
        empty = self.cluster.write_script("empty.sh", "")
        self.assert_rejected([empty], "#!")

    def test_unterminated_quote_in_directive_is_rejected(self):
        script = self.cluster.write_script(
            "quote.sh", "#!/bin/bash\n#SBATCH --job-name='oops\necho ran\n")
        self.assert_rejected([script], "line 2", "unterminated")

    def test_accepted_but_unsupported_options_warn_and_still_submit(self):
        script = self.cluster.write_script(
            "slurmy.sh", "#!/bin/bash\n#SBATCH --mail-type=END\n#SBATCH --comment=hi\necho ran\n")
        result = self.cluster.cli("batch", "--parsable", script)
        self.assertIn("--mail-type=END is not supported yet and is ignored", result.stderr)
        self.assertIn("--comment=hi is not supported yet and is ignored", result.stderr)
        self.cluster.wait_job(int(result.stdout), "COMPLETED")

    def test_unknown_partition_is_rejected(self):
        self.assert_rejected(["-p", "nosuch", self.good],
                             'invalid partition name "nosuch"')

    def test_cancel_or_show_of_unknown_job_id_fails_clearly(self):
        self.assert_rejected(["4242"], "invalid job id 4242", command="cancel")
        self.assert_rejected(["abc"], 'invalid job id "abc"', command="cancel")
        self.assert_rejected(["4242"], "invalid job id 4242", command="job")
        self.assert_rejected(["0"], "invalid job id", command="job")

    def test_request_bigger_than_the_cluster_is_refused_at_submit(self):
        # Left pending, such a job would wait forever; refused, its user
        # learns why at once and nothing is stored.
        node = next(iter(self.cluster.nodes().values()))
        too_big = {
            "more nodes": (["-N", "2"], "such node(s)"),
            "more CPUs": ([f"--cpus-per-task={node['cpus'] + 1}"], "such node(s)"),
            "a GPU": ((["--gpus-per-node=1"] if not node["gpus"] else
                       [f"--gpus-per-node={len(node['gpus']) + 1}"]),
                      "is more than any node of partition"),
            "more memory": ([f"--mem={node['memory_mb'] + 1024}M"], "such node(s)"),
        }
        jobs_before = self.cluster.cli_json("queue", "--all")["jobs"]
        for what, (options, message) in too_big.items():
            with self.subTest(what=what):
                result = self.cluster.cli("batch", *options, self.good, check=False)
                self.assertEqual(result.returncode, 1, result.stdout)
                self.assertIn(message, result.stderr)
        self.assertEqual(self.cluster.cli_json("queue", "--all")["jobs"], jobs_before,
                         "a refused job leaves nothing behind")
        runnable = self.cluster.submit(self.good)
        self.cluster.wait_job(runnable, "COMPLETED")

    def test_unwritable_output_path_fails_the_job_with_the_reason(self):
        job_id = self.cluster.submit(self.good, "-o", "/nonexistent-dir/out-%j.txt",
                                     "--max-restarts=0")
        job = self.cluster.wait_job(job_id, "FAILED")
        self.assertIn("could not start", job["reason_detail"])
        self.assertIn("/nonexistent-dir/out-", job["reason_detail"])
        self.assertNotEqual(job["exit_code"], 0)

    def test_missing_working_directory_fails_the_job_with_the_reason(self):
        job_id = self.cluster.submit(self.good, "-D", "/nonexistent-dir",
                                     "-o", self.cluster.path("out-%j.txt"),
                                     "--max-restarts=0")
        job = self.cluster.wait_job(job_id, "FAILED")
        self.assertIn("could not start", job["reason_detail"])
        self.assertIn("/nonexistent-dir", job["reason_detail"])

    def test_missing_interpreter_fails_the_job_with_exit_code_127(self):
        script = self.cluster.write_script("nointerp.sh", "#!/nonexistent/interpreter\necho\n")
        job_id = self.cluster.submit(script, "--max-restarts=0")
        job = self.cluster.wait_job(job_id, "FAILED")
        self.assertEqual(job["exit_code"], 127)
        self.assertIn("cannot execute", self.cluster.read(f"gantry-{job_id}.out"))


class GantrydFlagsTest(unittest.TestCase):
    """gantryd refuses settings that cannot work, instead of running."""

    def run_gantryd(self, *flags):
        """Runs gantryd with `flags` for at most 3 s (it is ready in a
        fraction of that); returns (exit code, or None if it was still
        running, and its output)."""
        with tempfile.TemporaryDirectory(prefix="gantry-it-", dir="/tmp") as tmp:
            argv = [os.path.join(gantry_cluster.build_dir(), "daemon", "gantryd"),
                    "--state-dir", os.path.join(tmp, "state"),
                    "--listen", "127.0.0.1:0",
                    "--socket", os.path.join(tmp, "ctl.sock"), *flags]
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=3)
                return done.returncode, done.stdout + done.stderr
            except subprocess.TimeoutExpired as running:  # killed by run()
                return None, (running.stderr or b"").decode(errors="replace")

    def test_node_timeout_shorter_than_the_heartbeat_interval_is_refused(self):
        # Accepted, this makes every node flap: down between two heartbeats,
        # back up when its agent re-registers, and every job on it NODE_FAIL.
        code, output = self.run_gantryd("--heartbeat-interval", "2", "--node-timeout", "1")
        self.assertIsNotNone(code, f"gantryd ran with a 1 s node timeout and 2 s "
                                   f"heartbeats:\n{output}")
        self.assertNotEqual(code, 0)
        self.assertIn("node-timeout", output)

    def test_out_of_range_heartbeat_interval_is_refused(self):
        code, output = self.run_gantryd("--heartbeat-interval", "0")
        self.assertIsNotNone(code, output)
        self.assertNotEqual(code, 0)
        self.assertIn("heartbeat-interval", output)


if __name__ == "__main__":
    gantry_cluster.main()
