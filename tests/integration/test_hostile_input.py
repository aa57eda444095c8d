#!/usr/bin/env python3
"""Hostile input through the raw API and the state gantryd leaves on disk.

- Strings that others see (job names, paths, drain reasons, checkpoint
  paths) with terminal escape sequences, newlines or NUL are refused with
  INVALID_ARGUMENT naming the field, and nothing is stored.
- Numbers are bounded: a time limit of 2^64-1 is refused, naming the limit.
- A batch script over the limit is an immediate error naming the limit,
  never "the controller is busy; retrying".
- Records stored before those checks (planted straight into RocksDB) are
  printed escaped by gantry queue (every format) and gantry job.
- gantryd started under umask 022 keeps its state 0700 / 0600, and refuses
  a state directory others can write to.

gantry-raw-request and gantry-plant-record (tests/tools) send and store
what the CLI never would.
"""

import json
import os
import stat
import subprocess
import tempfile
import time
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase, build_dir

GOOD_SCRIPT = "#!/bin/bash\necho ran\n"
U64_MAX = 2**64 - 1

# What may never reach stdout of a listing: ESC, BEL, NUL, CSI (C1).
RAW_CONTROL = [b"\x1b", b"\x07", b"\x00", b"\xc2\x9b"]


def tool(name):
    return os.path.join(build_dir(), "tests", "tools", name)


def text_string(raw):
    """`raw` (bytes) as a protobuf text-format string literal."""
    return '"' + "".join(
        chr(b) if 0x20 <= b < 0x7f and chr(b) not in '"\\' else f"\\{b:03o}"
        for b in raw) + '"'


class HostileRequestsTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=1)

    def raw(self, method, request_text):
        result = subprocess.run(
            [tool("gantry-raw-request"), f"127.0.0.1:{self.cluster.port}",
             method],
            input=request_text.encode(), capture_output=True,
            env=self.cluster.env, timeout=30)
        self.assertNotEqual(result.returncode, 2, result.stderr.decode())
        return result.returncode, result.stdout.decode(errors="replace")

    def submit_text(self, **overrides):
        spec = {
            "name": text_string(b"ok"),
            "script": text_string(GOOD_SCRIPT.encode()),
            "working_dir": text_string(self.cluster.work_dir.encode()),
        }
        spec.update(overrides)
        fields = " ".join(f"{k}: {v}" for k, v in spec.items())
        return f"spec {{ {fields} }} user: \"root\" uid: 0 gid: 0"

    def next_job_id(self):
        return self.cluster.status()["next_job_id"]

    def assert_refused(self, method, request_text, *expected):
        before = self.next_job_id()
        code, out = self.raw(method, request_text)
        self.assertEqual(code, 1, out)
        self.assertTrue(out.startswith("3: "), out)  # INVALID_ARGUMENT
        for text in expected:
            self.assertIn(text, out)
        self.assertEqual(self.next_job_id(), before, "nothing was stored")
        for raw in RAW_CONTROL:
            self.assertNotIn(raw.decode("latin-1"), out)

    def test_a_good_raw_submission_is_accepted(self):
        code, out = self.raw("Submit", self.submit_text())
        self.assertEqual(code, 0, out)
        job_id = int(out.split("job_id:")[1])
        self.cluster.wait_job(job_id, "COMPLETED")

    def test_control_characters_in_a_job_name_are_refused(self):
        for raw in [b"\x1b]0;owned\x07", b"\x1b[2J", b"x\n 42 root fake R",
                    b"nul\x00byte", b"csi\xc2\x9b2J"]:
            with self.subTest(name=raw):
                self.assert_refused(
                    "Submit", self.submit_text(name=text_string(raw)),
                    "name (--job-name)")

    def test_bidirectional_formatting_in_visible_fields_is_refused(self):
        # U+202E (RIGHT-TO-LEFT OVERRIDE) makes a listing print "job.sh"
        # for "hs.boj" and reorder the columns after it; the other
        # embeddings, overrides, isolates and marks likewise.
        rlo = "\u202e".encode()
        cases = [
            ({"name": text_string(rlo + b"hs.boj")}, "name (--job-name)"),
            ({"name": text_string("a\u2066b".encode())}, "name (--job-name)"),
            ({"name": text_string("a\u200fb".encode())}, "name (--job-name)"),
            ({"account": text_string(rlo + b"acct")}, "account (--account)"),
            ({"working_dir": text_string(b"/tmp/" + rlo)},
             "working_dir (--chdir)"),
            ({"output_pattern": text_string(b"/tmp/o" + rlo)},
             "output_pattern (--output)"),
        ]
        for overrides, field in cases:
            with self.subTest(field=field, value=overrides):
                self.assert_refused("Submit", self.submit_text(**overrides),
                                    field, "bidirectional formatting",
                                    "\\u20")
        # Through the CLI as well, with the reason.
        script = self.cluster.write_script("bidi.sh", GOOD_SCRIPT)
        result = self.cluster.cli("batch", "-J", "\u202ehs.boj", script,
                                  check=False)
        self.assertNotEqual(result.returncode, 0, result.stdout)
        self.assertIn("bidirectional formatting character \\u202e",
                      result.stderr)
        self.assertNotIn("\u202e", result.stderr)

    def test_control_characters_in_other_fields_are_refused(self):
        esc = text_string(b"x\x1b[2J")
        cases = [
            ({"partition": esc}, "partition (--partition)"),
            ({"output_pattern": esc}, "output_pattern (--output)"),
            ({"error_pattern": esc}, "error_pattern (--error)"),
            ({"working_dir": text_string(b"/tmp/\x1b[2J")},
             "working_dir (--chdir)"),
            ({"checkpoint_dir": text_string(b"/ck\n")},
             "checkpoint_dir (--checkpoint-dir)"),
            ({"dependency": esc}, "dependency (--dependency)"),
            ({"constraint": esc}, "constraint (--constraint)"),
            ({"required_nodes": esc}, "required_nodes (--nodelist)"),
            ({"gpu_type": esc}, "gpu_type"),
        ]
        for overrides, field in cases:
            with self.subTest(field=field):
                self.assert_refused("Submit", self.submit_text(**overrides),
                                    field)

    def test_bad_dataset_declarations_are_refused(self):
        def dataset(name, path):
            return (f"{{ name: {text_string(name)} "
                    f"path: {text_string(path)} }}")
        cases = [
            (dataset(b"a", b"/data/../etc"), "--dataset a: ", "normal form"),
            (dataset(b"a", b"relative"), "must be absolute"),
            (dataset(b"a", b"/"), "not / itself"),
            (dataset(b"a", b"/x\x00y"), "control characters"),
            (dataset(b"bad-name", b"/x"), "letters, digits and underscores"),
            (dataset(b"GANTRY_X=1;", b"/x"), "letters, digits"),
            # An enum value no CLI sends (proto3 keeps unknown values).
            ('{ name: "a" path: "/x" version_by: 7 }',
             "dataset a: version_by is 7, not one Gantry knows"),
        ]
        for value, *expected in cases:
            with self.subTest(value=value):
                self.assert_refused(
                    "Submit", self.submit_text(datasets=value), *expected)
        twice = self.submit_text(datasets=dataset(b"a", b"/x")).replace(
            "spec {", "spec { datasets: " + dataset(b"a", b"/y"))
        self.assert_refused("Submit", twice, "declared twice")

    def test_numbers_out_of_range_are_refused_naming_the_limit(self):
        cases = [
            ({"time_limit_seconds": U64_MAX},
             ["time_limit_seconds (--time) is 18446744073709551615 s",
              "the limit is 31536000 s"]),
            ({"hang_timeout_seconds": U64_MAX}, ["hang_timeout_seconds"]),
            ({"mem_per_node_mb": U64_MAX},
             ["mem_per_node_mb (--mem)", "1073741824 MB"]),
            ({"switches_max_wait_seconds": U64_MAX},
             ["switches_max_wait_seconds"]),
            ({"ntasks": 2**32 - 1}, ["ntasks (--ntasks)"]),
            ({"begin_time_ms": -5}, ["begin_time_ms (--begin) is -5"]),
            ({"warning_signal": -1}, ["warning_signal (--signal) is -1"]),
        ]
        for overrides, expected in cases:
            with self.subTest(fields=overrides):
                self.assert_refused("Submit", self.submit_text(**overrides),
                                    *expected)

    def test_a_year_of_time_limit_is_accepted_and_the_job_runs(self):
        code, out = self.raw(
            "Submit", self.submit_text(time_limit_seconds=365 * 24 * 3600))
        self.assertEqual(code, 0, out)
        job_id = int(out.split("job_id:")[1])
        self.cluster.wait_job(job_id, "COMPLETED")

    def test_drain_reason_and_checkpoint_path_are_checked(self):
        reason = text_string(b"ok\x1b]0;x\x07")
        code, out = self.raw(
            "Drain", f'nodes: "node01" reason: {reason} user: "root"')
        self.assertEqual(code, 1, out)
        self.assertIn("reason (--reason)", out)
        self.assertFalse(self.cluster.nodes()["node01"]["drained"],
                         "the node was not drained")
        path = text_string(b"/ck/\x1b[2J")
        code, out = self.raw(
            "ReportProgress",
            f'job_id: 1 step: 3 checkpoint_path: {path} user: "root"')
        self.assertEqual(code, 1, out)
        self.assertIn("checkpoint_path", out)

    def test_a_script_over_the_limit_is_an_immediate_error(self):
        # 100 MB: over gRPC's message limit as well as the script limit.
        for size in (100 << 20, 5 << 20):
            with self.subTest(size=size):
                path = os.path.join(self.cluster.work_dir, "huge.sh")
                with open(path, "w") as f:
                    f.write("#!/bin/bash\n")
                    f.write("#" * (size - 13) + "\n")
                before = self.next_job_id()
                started = time.monotonic()
                result = self.cluster.cli("batch", path, check=False,
                                          timeout=60)
                elapsed = time.monotonic() - started
                os.unlink(path)
                self.assertNotEqual(result.returncode, 0, result)
                self.assertLess(elapsed, 5, result.stderr)
                self.assertNotIn("busy", result.stderr)
                self.assertIn("the limit is 4194304 bytes", result.stderr)
                self.assertIn(str(size), result.stderr)
                self.assertEqual(self.next_job_id(), before)


class OldRecordsArePrintedEscapedTest(ClusterTestCase):
    """A record with control characters stored before gantryd refused them
    must not drive the terminal of whoever lists the queue."""

    # (Ill-formed UTF-8 cannot be stored: protobuf refuses to parse it in a
    # string field.)
    NAME = b"\x1b]0;owned\x07\x1b[2J\n 99 root forged RUNNING\xc2\x9b"

    def plant(self, cluster, kind, record):
        planted = subprocess.run(
            [tool("gantry-plant-record"), cluster.state_dir, kind],
            input=record.encode(), capture_output=True, timeout=30)
        self.assertEqual(planted.returncode, 0, planted.stderr)

    def run_cli(self, cluster, *args):
        result = subprocess.run([cluster.cli_bin, *args], env=cluster.env,
                                capture_output=True, timeout=30)
        self.assertEqual(result.returncode, 0, result)
        return result.stdout

    def test_nodes_and_status_escape_an_old_drain_reason(self):
        cluster = self.start_cluster(agents=1)
        cluster.kill_controller()
        reason = text_string(b"\x1b]0;owned\x07bad\nDIMM\x1b[2J")
        self.plant(cluster, "node",
                   f'name: "node01" drained: true drain_reason: {reason}')
        cluster.start_controller()
        cluster.wait_nodes_up(["node01"])
        outputs = {
            "nodes": self.run_cli(cluster, "nodes"),
            "nodes -N": self.run_cli(cluster, "nodes", "-N"),
            "nodes --detail": self.run_cli(cluster, "nodes", "--detail"),
            "nodes NODE": self.run_cli(cluster, "nodes", "node01"),
            "nodes -o": self.run_cli(cluster, "nodes", "-o", "%N %E"),
            "status": self.run_cli(cluster, "status", "--color=never"),
        }
        for what, out in outputs.items():
            with self.subTest(output=what):
                for raw in RAW_CONTROL:
                    self.assertNotIn(raw, out)
        for what in ("nodes NODE", "nodes --detail", "nodes -o", "status"):
            with self.subTest(output=what):
                self.assertIn(b"\\x1b]0;owned\\x07bad\\nDIMM", outputs[what])
        node = json.loads(self.run_cli(cluster, "nodes", "--json"))["nodes"][0]
        self.assertTrue(node["drain_reason"].startswith("\x1b]0;owned"))

    def test_queue_and_job_escape_old_records(self):
        cluster = self.start_cluster(agents=1)
        job_id = cluster.status()["next_job_id"] + 5
        cluster.kill_controller()
        reason = text_string(b"Done\x1b[5m")
        record = (
            # Ended just now: a finished job without an end time is
            # retired from listings at the next retention pass.
            f"id: {job_id} state: COMPLETED user: \"root\" "
            f"end_time_ms: {int(time.time() * 1000)} "
            f"reason: {reason} "
            f"spec {{ name: {text_string(self.NAME)} partition: \"debug\" "
            f"nodes: 1 ntasks_per_node: 1 cpus_per_task: 1 "
            f"working_dir: {text_string(cluster.work_dir.encode())} "
            f"script: \"#!/bin/bash\\n\" }}")
        self.plant(cluster, "job", record)
        cluster.start_controller()

        def run(*args):
            result = subprocess.run([cluster.cli_bin, *args],
                                    env=cluster.env, capture_output=True,
                                    timeout=30)
            self.assertEqual(result.returncode, 0, result)
            return result.stdout

        outputs = {
            "queue": run("queue", "-a"),
            "queue -o %j": run("queue", "-a", "-o", "%i %j %r"),
            "queue -o %.10j": run("queue", "-a", "-o", "%i %.10j"),
            "job": run("job", str(job_id)),
        }
        for what, out in outputs.items():
            with self.subTest(output=what):
                for raw in RAW_CONTROL:
                    self.assertNotIn(raw, out)
                self.assertNotIn(b"\n 99 root forged", out)
                self.assertIn(b"\\x1b", out)
        self.assertIn(b"\\x1b]0;owned\\x07\\x1b[2J\\n 99 root forged RUNNING"
                      b"\\u009b", outputs["queue -o %j"])
        # One header and one line: the newline did not forge a second row.
        lines = [line for line in outputs["queue -o %j"].splitlines()
                 if str(job_id).encode() in line or b"forged" in line]
        self.assertEqual(len(lines), 1, outputs["queue -o %j"])
        # JSON carries the name as it is, escaped by the JSON encoder.
        job = json.loads(run("job", str(job_id), "--json"))
        name = job["job"]["name"] if "job" in job else job["name"]
        self.assertTrue(name.startswith("\x1b]0;owned\x07"), name)


class StateDirectoryPermissionsTest(unittest.TestCase):

    def test_state_is_private_under_umask_022(self):
        old = os.umask(0o022)
        try:
            cluster = gantry_cluster.GantryCluster(agents=1).start()
        finally:
            os.umask(old)
        failed = True
        try:
            script = cluster.write_script("secret.sh",
                                          "#!/bin/bash\necho s3cret\n")
            job_id = cluster.submit(script)
            cluster.wait_job(job_id, "COMPLETED")
            state = cluster.state_dir
            self.assertEqual(stat.S_IMODE(os.stat(state).st_mode), 0o700)
            checked = 0
            for root, dirs, files in os.walk(state):
                for name in dirs + files:
                    path = os.path.join(root, name)
                    mode = stat.S_IMODE(os.lstat(path).st_mode)
                    self.assertEqual(mode & 0o077, 0,
                                     f"{path} has mode {mode:04o}")
                    checked += 1
            self.assertGreater(checked, 3)
            # The client socket stays usable by everyone.
            self.assertEqual(
                stat.S_IMODE(os.stat(cluster.socket).st_mode) & 0o666, 0o666)
            failed = False
        finally:
            cluster.stop_processes()
            cluster.finish(failed)

    def run_gantryd(self, state_dir):
        """gantryd on `state_dir`; returns (exit code or None if it kept
        running, stderr)."""
        socket_dir = tempfile.mkdtemp(prefix="gantry-it-sock-", dir="/tmp")
        try:
            process = subprocess.Popen(
                [os.path.join(build_dir(), "daemon", "gantryd"),
                 "--state-dir", state_dir, "--auth", "none",
                 "--listen", "127.0.0.1:0",
                 "--socket", os.path.join(socket_dir, "ctl.sock"),
                 "--metrics-listen", ""],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                _, err = process.communicate(timeout=10)
                return process.returncode, err.decode()
            except subprocess.TimeoutExpired:
                process.kill()
                _, err = process.communicate()
                return None, err.decode()
        finally:
            subprocess.run(["rm", "-rf", socket_dir], check=False)

    def test_a_state_directory_others_can_write_is_refused(self):
        parent = tempfile.mkdtemp(prefix="gantry-it-state-", dir="/tmp")
        try:
            state = os.path.join(parent, "state")
            os.mkdir(state)
            planted = os.path.join(state, "planted")
            with open(planted, "w") as f:
                f.write("x")
            os.chmod(state, 0o777)
            code, err = self.run_gantryd(state)
            self.assertEqual(code, 1, err)
            self.assertIn(state, err)
            self.assertIn("mode 0777", err)
            self.assertEqual(stat.S_IMODE(os.stat(state).st_mode), 0o777,
                             "left for an admin to look at")
            self.assertFalse(os.path.exists(os.path.join(state, "db")))

            # Inside a directory others can write (not sticky): refused too.
            os.chmod(state, 0o700)
            os.chmod(parent, 0o777)
            code, err = self.run_gantryd(state)
            self.assertEqual(code, 1, err)
            self.assertIn(parent, err)
        finally:
            subprocess.run(["rm", "-rf", parent], check=False)

    def test_a_state_directory_others_can_read_is_tightened(self):
        parent = tempfile.mkdtemp(prefix="gantry-it-state-", dir="/tmp")
        try:
            state = os.path.join(parent, "state")
            os.makedirs(os.path.join(state, "old"))
            with open(os.path.join(state, "old", "wal.log"), "w") as f:
                f.write("secret")
            os.chmod(state, 0o755)
            os.chmod(os.path.join(state, "old"), 0o755)
            os.chmod(os.path.join(state, "old", "wal.log"), 0o644)
            code, err = self.run_gantryd(state)
            self.assertIsNone(code, err)  # it started
            self.assertEqual(stat.S_IMODE(os.stat(state).st_mode), 0o700)
            self.assertEqual(stat.S_IMODE(
                os.stat(os.path.join(state, "old", "wal.log")).st_mode), 0o600)
            self.assertIn("readable by other users", err)
        finally:
            subprocess.run(["rm", "-rf", parent], check=False)


if __name__ == "__main__":
    gantry_cluster.main()
