#!/usr/bin/env python3
"""Several gantryds on one etcd cluster that an attacker can read and write
(as anyone with etcdctl and the endpoints the cluster uses could): a forged
log entry holding a job as root, an altered entry and a replayed one are
never applied or run, and each raises the alarm that `gantry status`
shows; a leader record pointing to the attacker's listener sends no client
or agent there; reading etcd gives no script, argument or snapshot token.
gantryd refuses to start without a private cluster key.

Skips, with a message, where etcd (Debian's etcd-server) is absent."""

import base64
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import uuid

import gantry_cluster
from etcd_cluster import etcd_binary, free_port
from gantry_cluster import ClusterTestCase, wait_for
from ha_cluster import HaCluster

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "..", "..", "proto")


def encode(message, text):
    """The protobuf `message` (gantry.v1) written in text format, encoded."""
    return subprocess.run(
        ["protoc", f"--encode=gantry.v1.{message}", "-I", PROTO_DIR,
         "gantry/v1/replication.proto"],
        input=text.encode(), capture_output=True, check=True).stdout


def text_bytes(data):
    return "".join(f"\\{b:03o}" for b in data)


def snapshot_token(key_path):
    """The token as controllers derive it (HKDF-SHA256 of the cluster key;
    daemon/replication/record_seal.h)."""
    with open(key_path, "rb") as key_file:
        key = key_file.read()
    prk = hmac.new(b"gantry replication v1", key, hashlib.sha256).digest()
    return hmac.new(prk, b"snapshot token\x01", hashlib.sha256).hexdigest()


class Listener:
    """A TCP listener that counts the connections it gets: the attacker's."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.socket.settimeout(0.2)
        self.address = f"127.0.0.1:{self.socket.getsockname()[1]}"
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            try:
                connection, _ = self.socket.accept()
                self.connections += 1
                connection.close()
            except OSError:
                pass

    def close(self):
        self.stop.set()
        self.thread.join(timeout=5)
        self.socket.close()


@unittest.skipUnless(etcd_binary(), "etcd is not installed (etcd-server)")
class UntrustedEtcdTest(ClusterTestCase):

    def start_ha(self, **options):
        cluster = HaCluster(label=self.id(), **options)
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        return cluster.start()

    def etcd_dump(self, cluster):
        """Every key and value under the cluster's prefix, as bytes."""
        # As etcd's root: the attacker here holds every etcd credential.
        result = cluster.etcd.etcdctl("get", "--prefix", cluster.etcd_prefix,
                                      "-w", "json")
        kvs = json.loads(result.stdout).get("kvs", [])
        return {base64.b64decode(kv["key"]).decode():
                base64.b64decode(kv.get("value", "")) for kv in kvs}

    def etcd_put(self, cluster, key, value):
        security = []
        if cluster.etcd.tls:
            cert, key_file = cluster.etcd.files.root
            security = ["--cacert", cluster.etcd.files.ca, "--cert", cert,
                        "--key", key_file]
        subprocess.run(
            ["etcdctl", "--endpoints", cluster.etcd.endpoints,
             "--command-timeout=5s", *security, "put", key],
            env={**os.environ, "ETCDCTL_API": "3"}, input=value,
            capture_output=True, check=True, timeout=30)

    def log_key(self, cluster, index):
        return f"{cluster.etcd_prefix}log/{index:020d}"

    def forged_entry(self, cluster, job_id, proof):
        """A log entry as gantryd wrote them before sealing: a job of uid 0
        that would create `proof` if it ever ran."""
        batch = encode("ReplicatedBatch", f"""
            jobs {{
              id: {job_id} state: PENDING user: "root" uid: 0 gid: 0
              spec {{ name: "forged" nodes: 1 ntasks_per_node: 1
                      cpus_per_task: 1 working_dir: "/tmp"
                      script: "#!/bin/bash\\ntouch {proof}\\n" }}
            }}
            next_job_id: {job_id + 1}""")
        return encode("LogEntry", f'batch: "{text_bytes(batch)}" '
                                  f"batch_bytes: {len(batch)}")

    def forged_records(self, cluster):
        return sum(c.get("forged_records", 0)
                   for c in cluster.status()["replication"]["controllers"])

    def test_forged_altered_and_replayed_entries_are_never_applied(self):
        cluster = self.start_ha(agents=1, controllers=2)
        marker = f"marker-{uuid.uuid4().hex}"
        script = cluster.write_script(
            "secret.sh", f"#!/bin/bash\n# {marker}-in-script\ntrue\n")
        job = cluster.submit(script, args=(f"{marker}-in-args",))
        cluster.wait_job(job, "COMPLETED", timeout=30)

        # Reading etcd: no script, argument or snapshot token in clear.
        dump = self.etcd_dump(cluster)
        self.assertTrue(any("/log/" in key for key in dump), dump.keys())
        self.assertEqual([k for k, v in dump.items() if marker.encode() in v],
                         [])
        token = snapshot_token(cluster.replication_key).encode()
        self.assertEqual([k for k, v in dump.items() if token in v], [])
        self.assertNotIn(f"{cluster.etcd_prefix}snapshot-token", dump)

        # Writing etcd: a forged entry ahead of the leader, a sealed entry
        # replayed at a later index, and an existing entry altered.
        # The newest entry in etcd, from the dump itself: gantry status
        # caches its figures for a second (a status read just before could
        # still say 0, and the test then wrote over a missing key).
        last = max(int(key.rsplit("/", 1)[1]) for key in dump
                   if "/log/" in key and key.rsplit("/", 1)[1].isdigit())
        proof = os.path.join(cluster.dir, "forged-job-ran")
        self.etcd_put(cluster, self.log_key(cluster, last + 1),
                      self.forged_entry(cluster, 9001, proof))
        self.etcd_put(cluster, self.log_key(cluster, last + 2),
                      dump[self.log_key(cluster, last)])
        self.etcd_put(cluster, self.log_key(cluster, last),
                      self.forged_entry(cluster, 9002, proof))
        wait_for(lambda: self.forged_records(cluster) >= 2 or None, 30,
                 "the standby to refuse the forged entries")
        self.assertIn("ALARM", cluster.cli("status").stdout)

        # The cluster goes on (the leader writes its own entries over the
        # forged ones ahead of it), and nothing forged was applied or run.
        for _ in range(3):
            done = cluster.submit(script)
            cluster.wait_job(done, "COMPLETED", timeout=30)
        for forged_id in (9001, 9002):
            self.assertNotEqual(
                cluster.cli("job", str(forged_id), check=False).returncode, 0)
        time.sleep(2)
        self.assertFalse(os.path.exists(proof), "a forged job ran")
        leader = cluster.wait_leader()
        standby = next(n for n in cluster.names if n != leader)
        self.assertIn("ALARM: refused a record in etcd",
                      cluster.controllers[standby].log_text())

    def test_forged_leader_record_sends_nobody_to_the_attacker(self):
        cluster = self.start_ha(agents=1, controllers=2)
        attacker = Listener()
        self.addCleanup(attacker.close)
        leader = cluster.wait_leader()
        standby = next(n for n in cluster.names if n != leader)
        self.etcd_put(cluster, f"{cluster.etcd_prefix}leader",
                      encode("ControllerMember",
                             f'name: "{leader}" address: "{attacker.address}"'
                             ' role: "leader"'))
        # Clients that know only the standby follow where it sends them;
        # agents redial through every controller.
        env = {**cluster.env,
               "GANTRY_CONTROLLER": f"127.0.0.1:{cluster.ports[standby]}"}
        script = cluster.write_script("ok.sh", "#!/bin/bash\ntrue\n")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            subprocess.run([cluster.cli_bin, "queue"], cwd=cluster.work_dir,
                           env=env, capture_output=True, timeout=60)
            time.sleep(0.5)
        cluster.wait_leader()
        cluster.wait_job(cluster.submit(script), "COMPLETED", timeout=40)
        self.assertEqual(attacker.connections, 0,
                         "a client or agent was sent to the forged leader")
        self.assertGreaterEqual(self.forged_records(cluster), 1)

    def test_upgrade_from_an_unsealed_log_as_the_readme_says(self):
        """A log an earlier gantryd wrote (unsealed) is refused with what
        to do; done as docs/admin-guide.md says (prefix cleared, the last leader
        started first), a standby that was behind copies the leader's
        state and nothing acknowledged is lost."""
        cluster = self.start_ha(agents=1, controllers=2)
        leader = cluster.wait_leader()
        standby = next(n for n in cluster.names if n != leader)
        script = cluster.write_script("ok.sh", "#!/bin/bash\ntrue\n")
        jobs = [cluster.submit(script)]
        cluster.wait_job(jobs[0], "COMPLETED", timeout=30)
        # The standby goes down first and misses what follows.
        cluster.kill_named(standby, signal.SIGTERM)
        cluster.controllers[standby].process.wait(timeout=30)
        jobs += [cluster.submit(script) for _ in range(3)]
        cluster.wait_job(jobs[-1], "COMPLETED", timeout=30)
        cluster.kill_named(leader, signal.SIGTERM)
        cluster.controllers[leader].process.wait(timeout=30)

        # The log as an earlier version left it: entries in clear.
        cluster.etcd.etcdctl("del", "--prefix", cluster.etcd_prefix)
        self.etcd_put(cluster, self.log_key(cluster, 1),
                      self.forged_entry(cluster, 1, "/nonexistent"))
        refused = cluster.start_named_controller(leader)
        refused.process.wait(timeout=60)
        self.assertNotEqual(refused.process.returncode, 0)
        self.assertIn("written by an earlier gantryd", refused.log_text())
        self.assertIn(f"etcdctl del --prefix {cluster.etcd_prefix}",
                      refused.log_text())

        # The admin guide's steps.
        cluster.etcd.etcdctl("del", "--prefix", cluster.etcd_prefix)
        cluster.start_named_controller(leader)
        self.assertEqual(cluster.wait_leader(timeout=60), leader)
        behind = cluster.start_named_controller(standby)
        wait_for(lambda: "installed a copy of the leader's state"
                 in behind.log_text() or None, 90,
                 f"{standby} to copy the leader's state")
        jobs.append(cluster.submit(script))
        cluster.wait_job(jobs[-1], "COMPLETED", timeout=40)
        for job in jobs:
            self.assertEqual(cluster.job(job)["state"], "COMPLETED")
        # The standby follows: it takes over with every job.
        cluster.kill_named(leader)
        self.assertEqual(cluster.wait_leader(timeout=60, other_than=leader),
                         standby)
        for job in jobs:
            self.assertEqual(cluster.job(job)["state"], "COMPLETED")

    def test_no_start_without_a_private_cluster_key(self):
        directory = tempfile.mkdtemp(prefix="gantry-key-", dir="/tmp")
        self.addCleanup(subprocess.run, ["rm", "-rf", directory])
        key = os.path.join(directory, "replication.key")
        with open(key, "wb") as key_file:
            key_file.write(os.urandom(32))
        cluster_probe = HaCluster(label=self.id())
        self._clusters.append(cluster_probe)
        for mode, path, expected in (
                (0o644, key, "mode 0644"),
                (0o600, os.path.join(directory, "missing.key"),
                 "head -c 32 /dev/urandom")):
            os.chmod(key, mode)
            result = subprocess.run(
                [cluster_probe.gantryd_bin,
                 "--state-dir", os.path.join(directory, "state"),
                 "--listen", f"127.0.0.1:{free_port()}", "--socket", "",
                 "--metrics-listen", "", "--etcd", "127.0.0.1:1",
                 "--etcd-insecure",
                 # No munged runs for this probe, and gantryd checks for
                 # one before it reads the key: what is tested is the key.
                 "--auth", "none",
                 "--replication-key", path],
                capture_output=True, text=True, timeout=60)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn(path, result.stderr)
            self.assertIn(expected, result.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
