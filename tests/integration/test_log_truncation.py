#!/usr/bin/env python3
"""The log of a replicated controller in etcd (gantryd --etcd) does not
grow without bound: the leader truncates what every following standby
holds (never while it is the only controller), compacts etcd's history of
it, and a standby that is behind the truncation (a new host, a wiped
disk) copies the leader's state and follows the log from there. A crash
at either step of installing that copy is walked.

Skips, with a message, where etcd (Debian's etcd-server) is absent."""

import json
import os
import re
import time
import unittest

import gantry_cluster
from etcd_cluster import etcd_binary
from gantry_cluster import ClusterTestCase, wait_for
from ha_cluster import HaCluster
from test_high_availability import RANK_SCRIPT, runs

TRUNCATING = ["--log-retain", "3", "--log-truncate-interval", "0.3"]


@unittest.skipUnless(etcd_binary(), "etcd is not installed (apt-get install "
                     "etcd-server): the replicated controller is not tested")
class LogTruncationTest(ClusterTestCase):

    def start_ha(self, only=None, **options):
        cluster = HaCluster(label=self.id(), gantryd_args=TRUNCATING,
                            **options)
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        return cluster.start(only=only)

    def replication(self, cluster):
        return cluster.status()["replication"]

    def log_indexes(self, cluster):
        """The indexes of the entries in etcd's log now."""
        prefix = f"/gantry-test/{os.path.basename(cluster.dir)}/log/"
        keys = cluster.etcd.etcdctl("get", "--prefix", "--keys-only",
                                    prefix).stdout.split()
        return [int(key[len(prefix):]) for key in keys]

    def submit_some(self, cluster, count):
        ids = []
        for _ in range(count):
            text = cluster.cli("batch", "--parsable", "--wrap", "true").stdout
            ids.append(int(text.strip()))
        return ids

    def applied(self, cluster, name):
        for member in self.replication(cluster)["controllers"]:
            if member["name"] == name:
                return member["applied_index"]
        return None

    def caught_up(self, cluster, name):
        status = self.replication(cluster)
        return any(m["name"] == name and
                   m["applied_index"] >= status["last_index"]
                   for m in status["controllers"])

    def wait_installed_and_caught_up(self, cluster, name):
        """`name`'s current process installed a copy of the leader's state
        and then followed the log to its end. (A killed process's member
        record lives on until its lease ends, so the status alone would
        not say which process caught up.)"""
        daemon = cluster.controllers[name]
        def following_after_install():
            text = daemon.log_text()
            installed = text.find("installed a copy of the leader's state")
            return installed >= 0 and "standing by" in text[installed:]
        wait_for(following_after_install, 60,
                 f"{name} to install the copy and stand by")
        wait_for(lambda: self.caught_up(cluster, name), 30,
                 f"{name} to catch up after the copy")

    def assert_all_known(self, cluster, job_ids):
        queue = cluster.cli_json("queue", "--all")["jobs"]
        known = {job["job_id"] for job in queue}
        for job_id in set(job_ids) - known:
            if cluster.cli("job", str(job_id), "--json",
                           check=False).returncode == 0:
                known.add(job_id)
        self.assertEqual(sorted(set(job_ids) - known), [],
                         "acknowledged jobs lost")

    def wipe_and_restart(self, cluster, name, env=None):
        cluster.kill_named(name)
        return cluster.start_named_controller(name, wipe=True, env=env)

    def test_truncated_behind_standbys_and_a_wiped_standby_copies_the_state(self):
        # ctl1 alone first: it keeps the whole log, the only copy outside
        # its host.
        cluster = self.start_ha(agents=2, controllers=2, only=["ctl1"])
        leader, standby = "ctl1", "ctl2"
        self.assertEqual(cluster.wait_leader(), leader)
        script = cluster.write_script("rank.sh", RANK_SCRIPT)
        long_job = cluster.submit(script, "-N2", "--ntasks-per-node=1",
                                  "--max-restarts=0")
        cluster.wait_job(long_job, "RUNNING")
        wait_for(lambda: len(runs(cluster, long_job)) == 2, 20, "both ranks")
        before = runs(cluster, long_job)
        jobs = self.submit_some(cluster, 10)
        time.sleep(1.5)  # several truncation intervals
        self.assertEqual(self.replication(cluster)["truncated_through"], 0)
        self.assertEqual(min(self.log_indexes(cluster)), 1)

        # With a standby following (from the log's first entry), the log is
        # truncated behind it.
        cluster.start_named_controller(standby)
        wait_for(lambda: self.caught_up(cluster, standby), 30,
                 f"{standby} to catch up")
        jobs += self.submit_some(cluster, 10)
        wait_for(lambda: self.replication(cluster)["truncated_through"] > 10,
                 30, "the leader to truncate the log")
        truncated = self.replication(cluster)["truncated_through"]
        indexes = self.log_indexes(cluster)
        self.assertGreater(min(indexes), truncated)
        self.assertEqual(sorted(indexes),
                         list(range(min(indexes), max(indexes) + 1)))
        self.assertIn('msg="truncated the log in etcd"',
                      cluster.controllers[leader].log_text())
        # etcd's history of the deleted entries is compacted (a pass
        # later): a read at an early revision is refused.
        def compacted():
            old = cluster.etcd.etcdctl("get", "--rev=2", "x", check=False)
            return "compacted" in old.stderr
        wait_for(compacted, 30, "etcd to compact the truncated history")

        # A standby with a new disk is behind the truncation: it copies the
        # leader's state and follows the log from there.
        self.wipe_and_restart(cluster, standby)
        self.wait_installed_and_caught_up(cluster, standby)
        self.assertIn('msg="sending a copy of the state"',
                      cluster.controllers[leader].log_text())
        jobs += self.submit_some(cluster, 3)

        # It can lead: every acknowledged job is there, the running job
        # untouched.
        cluster.kill_named(leader)
        self.assertEqual(cluster.wait_leader(other_than=leader), standby)
        self.assert_all_known(cluster, jobs)
        self.assertEqual(runs(cluster, long_job), before)
        self.assertEqual(cluster.job(long_job)["state"], "RUNNING")
        cluster.start_named_controller(leader)
        cluster.touch(f"release.{long_job}")
        cluster.wait_job(long_job, "COMPLETED", timeout=30)
        self.assertEqual(runs(cluster, long_job), before)

    def crash_while_installing(self, point):
        """A wiped standby dies at `point` of installing the leader's
        copy; started again, it finishes and follows."""
        cluster = self.start_ha(agents=1, controllers=2)
        leader = cluster.wait_leader()
        standby = next(n for n in cluster.names if n != leader)
        jobs = self.submit_some(cluster, 12)
        wait_for(lambda: self.replication(cluster)["truncated_through"] > 5,
                 30, "the leader to truncate the log")
        daemon = self.wipe_and_restart(cluster, standby,
                                       env={"GANTRY_CRASH_AT": point})
        wait_for(lambda: not daemon.running(), 60, f"{standby} to die at {point}")
        cluster.start_named_controller(standby)
        self.wait_installed_and_caught_up(cluster, standby)
        state = cluster.state_dir_of(standby)
        self.assertEqual(sorted(n for n in os.listdir(state)
                                if n.startswith("db")), ["db"])
        cluster.kill_named(leader)
        self.assertEqual(cluster.wait_leader(other_than=leader), standby)
        self.assert_all_known(cluster, jobs)

    def test_point_gantryd_snapshot_after_ready_before_install(self):
        self.crash_while_installing("gantryd.snapshot.after_ready_before_install")

    def test_point_gantryd_snapshot_between_renames(self):
        self.crash_while_installing("gantryd.snapshot.between_renames")


if __name__ == "__main__":
    gantry_cluster.main()
