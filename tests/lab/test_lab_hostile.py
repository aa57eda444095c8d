#!/usr/bin/env python3
"""A hostile local user against the lab's cluster (tests/lab/README.md), as
on a site: `mallory`, an unprivileged account on the login host and on a
controller's host, goes for what issue 34 found open.

Each attack is an assertion.
"""

import os
import random
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


class HostileUserInLabTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = missing_prerequisites()
        if why:
            raise unittest.SkipTest(why)
        name = f"glabm{random.randint(10000, 99999)}"
        subprocess.run(["useradd", "-M", "-U", "-s", "/bin/sh", name], check=True)
        cls.addClassCleanup(subprocess.run, ["userdel", name])
        cls.mallory = name
        cls.lab = Lab(gantry_cluster.build_dir(), controllers=2, agents=2)
        try:
            cls.lab.start()
            cls.leader = cls.lab.wait_leader()
        except BaseException:
            cls.lab.stop(failed=True)
            raise
        cls.addClassCleanup(cls.lab.stop)

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


if __name__ == "__main__":
    gantry_cluster.main()
