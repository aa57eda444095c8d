#!/usr/bin/env python3
"""A hostile local user against the lab's cluster (tests/lab/README.md), as
on a site: `mallory`, an unprivileged account on the login host and on a
controller's host, goes for what issue 34 found open, while `alice`, an
ordinary user, runs her jobs.

Each attack is an assertion.
"""

import json
import os
import pwd
import random
import re
import select
import socket
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import gantry_cluster  # noqa: E402
from lab_cluster import (ETCD_CLIENT_PORT, ETCD_PREFIX, GANTRYD_PORT,  # noqa: E402
                         METRICS_PORT, Lab, missing_prerequisites)
from test_preflight_flood import FLOODER  # noqa: E402
from verdicts import wait_jobs_terminal  # noqa: E402
from workload import Workload  # noqa: E402

# Connects to ADDRESS PORT, sends PAYLOAD (may be empty), then waits for
# the other end to close: prints "dropped after SECONDS s".
PROBE = r"""
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), 10)
if sys.argv[3]:
    s.sendall(sys.argv[3].encode())
s.settimeout(60)
began = time.monotonic()
try:
    while s.recv(4096):
        pass
except OSError:
    pass
print(f"dropped after {time.monotonic() - began:.1f} s")
"""

# More idle connections per pre-flight port than the listener once served
# at a time (32), as in tests/integration/test_preflight_flood.py.
CONNECTIONS_PER_PORT = 40


class HostileUserInLabTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = missing_prerequisites()
        if why:
            raise unittest.SkipTest(why)
        tag = random.randint(10000, 99999)
        # Users first: hosts see /etc as it is when they start.
        for role in ("mallory", "alice"):
            name = f"glab{role[0]}{tag}"
            subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", name],
                           check=True)
            cls.addClassCleanup(subprocess.run, ["userdel", name])
            setattr(cls, role, name)
        cls.lab = Lab(gantry_cluster.build_dir(), controllers=2, agents=2)
        try:
            cls.lab.start()
            cls.leader = cls.lab.wait_leader()
        except BaseException:
            cls.lab.stop(failed=True)
            raise
        cls.addClassCleanup(cls.lab.stop)
        cls.workload = Workload(cls.lab, [pwd.getpwnam(cls.alice)])

    def as_mallory(self, host, *argv):
        return self.lab.hosts[host].run(list(argv), user=self.mallory,
                                        check=False, timeout=60)

    def test_etcd_refuses_a_local_user(self):
        """Issue 34 point 2: a local user read every job's script from
        etcd's log and wrote a job with uid 0 into it."""
        tls = ",".join(f"https://{self.lab.addresses[n]}:{ETCD_CLIENT_PORT}"
                       for n in self.lab.etcd_names)
        for verb in (("get", "--prefix", ETCD_PREFIX),
                     ("put", f"{ETCD_PREFIX}/log/99999999999999999999", "x")):
            result = self.as_mallory(
                "login", "env", "ETCDCTL_API=3", "etcdctl", "--endpoints", tls,
                "--cacert", "/etc/gantry/tls/ca.pem", "--command-timeout=5s",
                *verb)
            self.assertNotEqual(result.returncode, 0,
                                f"etcd {verb[0]} over TLS without a client "
                                f"certificate: {result.stdout[:300]}")

    def test_controller_secrets_are_not_readable(self):
        """The keys a controller holds: its TLS key, its etcd client key,
        the replication key, and its state directory."""
        for path in ("/etc/gantry/tls/gantryd.key",
                     "/etc/gantry/tls/etcd-gantry.key",
                     "/etc/gantry/replication.key"):
            result = self.as_mallory(self.leader, "cat", path)
            self.assertNotEqual(result.returncode, 0, f"mallory read {path}")
        result = self.as_mallory(self.leader, "ls", "/var/lib/gantry")
        self.assertNotEqual(result.returncode, 0,
                            "mallory listed gantryd's state directory")

    def test_fetch_snapshot_refuses_a_guessed_token(self):
        """Issue 34 point 2: a local user downloaded the leader's whole
        database with FetchSnapshot and the token he read from etcd. The
        token is no longer anywhere to read; a guess gets nothing."""
        # gRPC framing by hand (no gRPC library on the login host): flag
        # 0, big-endian length, FetchSnapshotRequest{token, requester}.
        message = b"\x0a\x05guess\x12\x07mallory"
        frame = b"\x00" + len(message).to_bytes(4, "big") + message
        address = self.lab.addresses[self.leader]
        result = self.as_mallory_with_input(
            "login", frame.decode("latin-1"),
            "curl", "-s", "--http2", "--max-time", "10",
            "--cacert", "/etc/gantry/tls/ca.pem", "-o", "/dev/null",
            "-D", "-", "-w", "downloaded=%{size_download}\n",
            "-H", "content-type: application/grpc", "-H", "te: trailers",
            "--data-binary", "@-",
            f"https://{address}:{GANTRYD_PORT}"
            "/gantry.v1.ControllerPeerService/FetchSnapshot")
        headers = result.stdout.lower()
        # Refused by gRPC (a status other than OK), or at the TLS
        # handshake; either way not one byte of the database.
        self.assertNotIn("grpc-status: 0\r", headers, result.stdout)
        if result.returncode == 0:
            self.assertIn("grpc-status:", headers, result.stdout)
            self.assertIn("downloaded=0\n", result.stdout)

    def as_mallory_with_input(self, host, text, *argv):
        return self.lab.hosts[host].run(list(argv), user=self.mallory,
                                        check=False, timeout=60, input=text)

    def test_idle_half_requests_do_not_block_metrics(self):
        """Issue 34 point 9: two idle half-requests blocked /metrics for
        everyone."""
        address = self.lab.addresses[self.leader]
        idle = []
        for _ in range(2):
            connection = socket.create_connection((address, METRICS_PORT), 10)
            connection.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            idle.append(connection)
        try:
            time.sleep(1)
            result = self.as_mallory(
                "login", "python3", "-c",
                "import urllib.request,sys;"
                f"urllib.request.urlopen('http://{address}:{METRICS_PORT}"
                "/metrics', timeout=10).read();print('scraped')")
            blocked = "scraped" not in result.stdout
        finally:
            for connection in idle:
                connection.close()
        self.assertFalse(blocked, "two idle half-requests blocked scraping: "
                         f"{result.stderr[-300:]}")

    def test_preflight_ports_held_by_a_local_user(self):
        """Issue 34 point 4: idle, reconnecting connections to every
        agent's pre-flight port failed a neighbour's check and drained
        healthy nodes."""
        targets = [f"{self.lab.addresses[node]}:{self.preflight_port(node)}"
                   for node in self.lab.node_names]
        flooder = self.lab.hosts["login"].popen(
            ["/usr/bin/python3", "-c", FLOODER, str(CONNECTIONS_PER_PORT),
             *targets], user=self.mallory, stdout=subprocess.PIPE)
        self.addCleanup(flooder.stdout.close)
        self.addCleanup(flooder.wait, 10)
        self.addCleanup(flooder.kill)
        # Until the listeners have closed idle connections and the flooder
        # has opened new ones: the flood is in its steady state.
        opened, initial = 0, CONNECTIONS_PER_PORT * len(targets)
        while opened <= initial:
            ready, _, _ = select.select([flooder.stdout], [], [], 30)
            self.assertTrue(ready, "the flooder stopped reporting")
            line = flooder.stdout.readline().split()
            self.assertTrue(line, "the flooder died")
            if line[0] == b"opened":
                opened = int(line[1])
        alice = pwd.getpwnam(self.alice)
        ack = self.workload.submit(alice, nodes=len(self.lab.node_names),
                                   options=("--preflight=yes",))
        self.assertIsNotNone(ack["job_id"], ack["error"])
        final = wait_jobs_terminal(self.lab, [ack["job_id"]], timeout=120)
        self.assertEqual(final.get(ack["job_id"], {}).get("state"),
                         "COMPLETED", final)
        nodes = json.loads(self.lab.cli("nodes", "--json").stdout)["nodes"]
        self.assertEqual([n["name"] for n in nodes if n["drained"]], [])
        self.assertIsNone(flooder.poll(), "the flooder died")

    def preflight_port(self, node):
        """The port the node's agent logged its pre-flight listener on."""
        pattern = re.compile(r'msg="pre-flight listener ready".* port=(\d+)')
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            match = pattern.search(self.lab.units[node].log_text())
            if match:
                return int(match.group(1))
            time.sleep(0.5)
        raise AssertionError(f"{node}: no pre-flight listener in its log")

    def test_srun_output_listener_against_a_local_user(self):
        """Issue 34 point 9: srun's output listener bound every address
        and kept a connection that never sent its header for the whole
        step. Mallory, on the same login host, connects to alice's
        listener and says nothing, and again with junk: both are dropped
        long before the step ends, and alice gets her output, all of it
        and nothing else."""
        step = self.lab.hosts["login"].popen(
            ["/bin/sh", "-c", f'cd "{self.lab.shared}/{self.alice}" && exec '
             "gantry run -N2 -l /bin/sh -c 'for i in 1 2 3 4 5 6 7 8; do "
             "echo line$i; sleep 4; done'"],
            user=self.alice, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        self.addCleanup(step.wait, 30)
        self.addCleanup(step.kill)
        address, port = self.listening_address(step.pid)
        began = time.monotonic()
        probes = [self.lab.hosts["login"].popen(
            ["python3", "-c", PROBE, address, str(port), payload],
            user=self.mallory, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for payload in ("", "0: injected by mallory\n" * 100)]
        reports = []
        for probe in probes:
            out, err = probe.communicate(timeout=60)
            reports.append(out.decode() + err.decode())
        probes_done = time.monotonic() - began
        out, err = step.communicate(timeout=90)
        self.assertEqual(step.returncode, 0, err[-500:])
        for report in reports:
            self.assertRegex(report, r"^dropped after", report)
            self.assertLess(float(report.split()[2]), 20, report)
        # The step (about 32 s) outlived the probes: the listener dropped
        # them, not the step's end.
        self.assertLess(probes_done, 28, reports)
        self.assertNotIn(b"mallory", out)
        self.assertEqual(sorted(out.decode().splitlines()),
                         sorted(f"{task}: line{i}" for task in (0, 1)
                                for i in range(1, 9)), out)

    def listening_address(self, pid):
        """(address, port) of the first socket `pid` listens on."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            out = subprocess.run(["ss", "-Hltnp"], capture_output=True,
                                 text=True).stdout
            for line in out.splitlines():
                if f"pid={pid}," in line:
                    address, port = line.split()[3].rsplit(":", 1)
                    address = address.strip("[]")
                    return ("127.0.0.1" if address in ("*", "0.0.0.0")
                            else address), int(port)
            time.sleep(0.2)
        raise AssertionError("srun's output listener never listened")


if __name__ == "__main__":
    gantry_cluster.main()
