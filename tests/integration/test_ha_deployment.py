#!/usr/bin/env python3
"""Highly available controllers set up as the admin guide's recipe (docs/admin-guide.md) and the
shipped configuration set them up, not as a test harness would:

- the unix socket on (the default --socket, which the recipe keeps): both
  controllers start, the leader answers on its socket and a standby's
  socket says where the leader is;
- etcd endpoints that are not one etcd cluster (three one-member
  clusters, as Debian's etcd-server left the recipe's members) are refused
  at start with the endpoints and their cluster ids, before anything is
  read or campaigned for;
- a member replaced by another cluster while gantryd runs is an alarm
  (log, metric, `gantry status`) and its answers are ignored.

Skips where etcd (Debian's etcd-server) is absent."""

import json
import os
import re
import subprocess
import tempfile
import unittest

import gantry_cluster
from etcd_cluster import EtcdCluster, EtcdFiles, etcd_binary
from gantry_cluster import ClusterTestCase, build_dir, wait_for
from ha_cluster import HaCluster
from test_metrics import scrape, value


def run_gantryd(config_lines, directory, timeout=60):
    """gantryd with a [controller] table of `config_lines` and a state dir,
    socket and port of its own; returns the CompletedProcess (it is
    expected to refuse to start, so it is waited for)."""
    config = os.path.join(directory, "gantry.toml")
    # The cluster key as the recipe makes it, so that what is refused is
    # what the test is about.
    key = os.path.join(directory, "replication.key")
    if not os.path.exists(key):
        with open(os.open(key, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as out:
            out.write(os.urandom(32))
    with open(config, "w") as out:
        out.write("[controller]\n" + "\n".join(config_lines) +
                  f'\nreplication-key = "{key}"\n')
    return subprocess.run(
        [os.path.join(build_dir(), "daemon", "gantryd"), "--config", config,
         "--state-dir", os.path.join(directory, "state"),
         "--listen", "127.0.0.1:0",
         "--socket", os.path.join(directory, "ctl.sock"),
         "--metrics-listen", "", "--auth", "none"],
        capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL)


def raft_leader(etcd, name):
    """Whether etcd member `name` is its cluster's raft leader."""
    result = etcd.etcdctl(
        "endpoint", "status", "-w", "json",
        endpoints=f"127.0.0.1:{etcd.client_ports[name]}")
    status = json.loads(result.stdout)[0]["Status"]
    return status["leader"] == status["header"]["member_id"]


def tls_config(files):
    """The [controller] keys that give gantryd etcd's CA and its client
    certificate."""
    ca, (cert, key) = files.ca, files.gantry
    return [f'etcd-ca = "{ca}"', f'etcd-cert = "{cert}"',
            f'etcd-key = "{key}"']


@unittest.skipUnless(etcd_binary(), "etcd is not installed (apt-get install "
                     "etcd-server): the replicated controller is not tested")
class HaDeploymentTest(ClusterTestCase):

    def start_ha(self, **options):
        cluster = HaCluster(label=self.id(), **options)
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        return cluster.start()

    def test_socket_on_leader_answers_standby_points_to_it(self):
        # Both controllers have a unix socket (from their gantry.toml), as
        # the default --socket gives every site: a standby serving it used
        # to abort gantryd at start.
        cluster = self.start_ha(agents=1, controllers=2)
        leader = cluster.wait_leader()
        standby = next(n for n in cluster.names if n != leader)
        wait_for(lambda: os.path.exists(cluster.sockets[standby]), 20,
                 "the standby's socket")
        for name in cluster.names:
            self.assertTrue(cluster.controllers[name].running(),
                            cluster.controllers[name].log_text())
        through_leader = subprocess.run(
            [cluster.cli_bin, "status", "--json"], capture_output=True,
            text=True, timeout=30, env=cluster.socket_env(leader))
        self.assertEqual(through_leader.returncode, 0, through_leader.stderr)
        self.assertEqual(
            json.loads(through_leader.stdout)["replication"]["leader"], leader)
        # The standby's socket names the leader; the CLI, given only that
        # socket, follows it there (as it follows a list of controllers).
        through_standby = subprocess.run(
            [cluster.cli_bin, "status", "--json"], capture_output=True,
            text=True, timeout=30, env=cluster.socket_env(standby))
        self.assertEqual(through_standby.returncode, 0, through_standby.stderr)
        self.assertEqual(
            json.loads(through_standby.stdout)["replication"]["leader"],
            leader)
        # A job submitted through the leader's socket runs.
        script = cluster.write_script("ok.sh", "#!/bin/bash\ntrue\n")
        submitted = subprocess.run(
            [cluster.cli_bin, "batch", "--parsable", script],
            capture_output=True, text=True, timeout=60,
            env=cluster.socket_env(leader), cwd=cluster.work_dir)
        self.assertEqual(submitted.returncode, 0, submitted.stderr)
        cluster.wait_job(int(submitted.stdout.strip()), "COMPLETED",
                         timeout=30)

    def test_one_member_clusters_are_refused(self):
        # What the broken recipe made: three etcds, each a cluster of its
        # own (same CA, same auth setup), given as one cluster's endpoints.
        directory = tempfile.mkdtemp(prefix="gantry-it-", dir="/tmp")
        self.addCleanup(subprocess.run, ["rm", "-rf", directory])
        files = EtcdFiles(os.path.join(directory, "pki"), ["e1"])
        clusters = []
        for i in range(3):
            etcd = EtcdCluster(os.path.join(directory, f"etcd{i + 1}"),
                               members=1, files=files,
                               token=f"etcd-cluster-{i + 1}")
            self.addCleanup(etcd.stop)
            clusters.append(etcd.start())
        endpoints = ",".join(etcd.endpoints for etcd in clusters)
        result = run_gantryd([f'etcd = "{endpoints}"', *tls_config(files)],
                             directory)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("the etcd endpoints are not one etcd cluster",
                      result.stderr)
        ids = re.findall(r"cluster ([0-9a-f]{8,})", result.stderr)
        self.assertEqual(len(set(ids)), 3, result.stderr)
        for etcd in clusters:
            self.assertIn(etcd.endpoints, result.stderr)
        self.assertIn("--initial-cluster-state new", result.stderr)
        # Nothing was written to any of them.
        for etcd in clusters:
            keys = etcd.etcdctl("get", "--prefix", "--keys-only", "/gantry")
            self.assertEqual(keys.stdout.strip(), "")

    def test_member_of_another_cluster_raises_alarm(self):
        cluster = self.start_ha(agents=1, controllers=1, etcd_members=3,
                                metrics=True)
        leader = cluster.wait_leader()
        # A member that is not etcd's raft leader (losing that one costs an
        # etcd election, which is not what this test is about) is replaced
        # by a fresh one-member cluster on its address (a reinstalled host
        # that initialized itself).
        replaced = next(name for name in cluster.etcd.names
                        if not raft_leader(cluster.etcd, name))
        cluster.etcd.kill_member(replaced)
        foreign = EtcdCluster(os.path.join(cluster.dir, "foreign"),
                              members=1, files=cluster.etcd.files,
                              token="another-cluster")
        foreign.client_ports["e1"] = cluster.etcd.client_ports[replaced]
        self.addCleanup(foreign.stop)
        foreign.start_member("e1")
        foreign.wait_healthy(["e1"])
        e3 = f"127.0.0.1:{cluster.etcd.client_ports[replaced]}"

        def alarm_metric():
            text = scrape(cluster.metrics_address(leader))
            return value(text, "gantry_replication_etcd_foreign_members") == 1
        wait_for(alarm_metric, 30, "the foreign-member metric")
        daemon = cluster.controllers[leader]
        self.assertRegex(daemon.log_text(),
                         r"ALARM: etcd member of another cluster.*" +
                         re.escape(e3))

        def status_alarm():
            status = cluster.status()["replication"]["etcd"]
            return any(m["endpoint"] == e3 and not m["reachable"] and
                       m["error"].startswith("ALARM: ") for m in status)
        wait_for(status_alarm, 30, "gantry status to show the alarm")
        text = cluster.cli("status").stdout
        self.assertIn(f"{e3}: unreachable (ALARM: etcd member {e3} answers "
                      "for etcd cluster", text)
        # The cluster goes on with the two members of its own cluster, the
        # same leader in office (an answer from the other cluster, where
        # its leader key is absent, was not taken as a deposition).
        script = cluster.write_script("ok.sh", "#!/bin/bash\ntrue\n")
        cluster.wait_job(cluster.submit(script), "COMPLETED", timeout=30)
        self.assertTrue(daemon.running())
        self.assertNotIn("stepping down", daemon.log_text())


if __name__ == "__main__":
    gantry_cluster.main()
