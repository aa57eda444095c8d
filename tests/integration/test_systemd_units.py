"""The systemd side of a production install (packaging/systemd,
sysusers.d, tmpfiles.d) and the daemons' sd_notify protocol.

- Both units pass `systemd-analyze verify` with nothing on stderr (an
  unknown key is only a warning there, with exit code 0), with ExecStart
  pointed at the built binaries and Documentation= checked against the man
  pages the build made.
- The sysusers.d and tmpfiles.d snippets work on a scratch root.
- gantryd and gantry-agent, given NOTIFY_SOCKET (a datagram socket this
  test owns) and WATCHDOG_USEC, send READY=1, keep sending WATCHDOG=1, and
  send STOPPING=1 on SIGTERM.

Skips with a message where systemd's tools are not installed.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase, GantryCluster, build_dir

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGING = os.path.join(REPO, "packaging")
UNITS = {"gantryd.service": "daemon/gantryd",
         "gantry-agent.service": "agent/gantry-agent"}


def need(tool):
    path = shutil.which(tool)
    if path is None:
        raise unittest.SkipTest(f"{tool} is not installed (package systemd)")
    return path


class UnitFilesTest(unittest.TestCase):

    def setUp(self):
        need("systemd-analyze")
        self.dir = tempfile.mkdtemp(prefix="gantry-units-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def unit_copy(self, name, extra=""):
        """The shipped unit with ExecStart's binary replaced by the built
        one (verify needs an existing absolute path), plus `extra` lines."""
        with open(os.path.join(PACKAGING, "systemd", name)) as f:
            text = f.read()
        binary = os.path.join(build_dir(), UNITS[name])
        text, count = re.subn(r"^ExecStart=\S+", f"ExecStart={binary}", text,
                              flags=re.M)
        self.assertEqual(count, 1, f"{name} has one ExecStart")
        text = text.replace("[Service]\n", "[Service]\n" + extra)
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def verify(self, *paths):
        env = dict(os.environ)
        man = os.path.join(build_dir(), "packaging", "man")
        args = ["systemd-analyze", "verify"]
        if os.path.isdir(os.path.join(man, "man8")):
            env["MANPATH"] = man  # Documentation=man:... must resolve
        else:
            args.append("--man=no")  # built without help2man
        return subprocess.run(args + list(paths), capture_output=True,
                              text=True, env=env, cwd=self.dir, timeout=60)

    def test_units_verify_cleanly(self):
        result = self.verify(*(self.unit_copy(name) for name in UNITS))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr.strip(), "",
                         "systemd-analyze verify warned")

    def test_the_check_catches_an_unknown_key(self):
        # The check above is only worth something if verify complains here.
        result = self.verify(self.unit_copy("gantryd.service",
                                            "NotifyAcess=main\n"))
        self.assertIn("NotifyAcess", result.stderr)

    def test_units_match_the_daemons(self):
        with open(os.path.join(PACKAGING, "systemd", "gantryd.service")) as f:
            gantryd = f.read()
        # The daemon's defaults are the unit's directories.
        self.assertIn("StateDirectory=gantry\n", gantryd)
        self.assertIn("RuntimeDirectory=gantry\n", gantryd)
        self.assertIn("User=gantry\n", gantryd)
        for unit in UNITS:
            with open(os.path.join(PACKAGING, "systemd", unit)) as f:
                text = f.read()
            self.assertIn("Type=notify\n", text)
            self.assertIn("WatchdogSec=", text)
            self.assertIn("--config=/etc/gantry/gantry.toml", text)

    def test_sysusers_and_tmpfiles_snippets(self):
        need("systemd-sysusers")
        need("systemd-tmpfiles")
        root = os.path.join(self.dir, "root")
        os.makedirs(os.path.join(root, "etc"))
        subprocess.run(
            ["systemd-sysusers", f"--root={root}",
             os.path.join(PACKAGING, "sysusers.d", "gantry.conf")],
            check=True, capture_output=True, timeout=60)
        with open(os.path.join(root, "etc", "passwd")) as f:
            entry = [line for line in f if line.startswith("gantry:")]
        self.assertEqual(len(entry), 1)
        fields = entry[0].strip().split(":")
        self.assertLess(int(fields[2]), 1000, "a system user")
        self.assertEqual(fields[5:], ["/var/lib/gantry", "/usr/sbin/nologin"])

        for snippet in ("gantry-controller.conf", "gantry-agent.conf"):
            result = subprocess.run(
                ["systemd-tmpfiles", f"--root={root}", "--create",
                 os.path.join(PACKAGING, "tmpfiles.d", snippet)],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(result.returncode, 0, result.stderr)
        state = os.stat(os.path.join(root, "var", "lib", "gantry"))
        self.assertEqual(state.st_mode & 0o777, 0o700)
        self.assertEqual(state.st_uid, int(fields[2]))
        spool = os.stat(os.path.join(root, "var", "spool", "gantry"))
        self.assertEqual((spool.st_mode & 0o777, spool.st_uid), (0o755, 0))


class NotifyListener:
    """A unix datagram socket standing in for systemd's notify socket."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.messages = []  # each a list of "KEY=VALUE" lines

    def receive(self, timeout):
        """Collects messages for up to `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                break
            self.messages.append(data.decode().split("\n"))

    def wait_for(self, line, timeout, count=1):
        deadline = time.monotonic() + timeout
        while self.count(line) < count and time.monotonic() < deadline:
            self.receive(min(0.2, max(0.01, deadline - time.monotonic())))
        return self.count(line)

    def count(self, line):
        return sum(message.count(line) for message in self.messages)

    def close(self):
        self.sock.close()


class NotifyTest(ClusterTestCase):

    WATCHDOG_USEC = 400_000  # so a ping every 0.2 s

    def test_ready_watchdog_and_stopping(self):
        cluster = GantryCluster(agents=1, label=self.id())
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        listeners = {}
        for role in ("gantryd", "agent"):
            listener = NotifyListener(os.path.join(cluster.dir, f"{role}.notify"))
            self.addCleanup(listener.close)
            listeners[role] = listener
        # Each daemon gets its own socket, as each unit has its own.
        cluster.env["WATCHDOG_USEC"] = str(self.WATCHDOG_USEC)
        cluster.env["NOTIFY_SOCKET"] = listeners["gantryd"].path
        controller = cluster.start_controller()
        cluster.env["NOTIFY_SOCKET"] = listeners["agent"].path
        agent = cluster.start_agent("node01")
        cluster.wait_nodes_up(["node01"])

        for role, listener in listeners.items():
            self.assertEqual(listener.wait_for("READY=1", 10), 1,
                             f"{role}: READY=1 {listener.messages}")
            statuses = [line for message in listener.messages
                        for line in message if line.startswith("STATUS=")]
            self.assertTrue(statuses, f"{role} sent no STATUS=")
            # 2 s at one ping per 0.2 s: allow for a slow machine.
            before = listener.count("WATCHDOG=1")
            listener.receive(2.0)
            pings = listener.count("WATCHDOG=1") - before
            self.assertGreaterEqual(pings, 4, f"{role}: {pings} pings in 2 s")

        for role, daemon in (("agent", agent), ("gantryd", controller)):
            daemon.send(signal.SIGTERM)
            self.assertGreaterEqual(
                listeners[role].wait_for("STOPPING=1", 10), 1,
                f"{role}: no STOPPING=1 after SIGTERM")
            daemon.process.wait(timeout=15)
            self.assertEqual(daemon.process.returncode, 0)

    def test_no_notify_socket_no_harm(self):
        # The harness starts daemons without NOTIFY_SOCKET; they must run
        # as before (the cluster starting is the check).
        cluster = self.start_cluster(agents=1)
        self.assertIn("node01", cluster.nodes())


if __name__ == "__main__":
    gantry_cluster.main()
