#!/usr/bin/env python3
"""Partitions on a real three-node cluster: nodes sorted into partitions by
gantryd --partition (slurm.conf syntax), the default partition, DefaultTime
and MaxTime (a job without --time gets the default and is ended TIMEOUT by
it), MaxNodes and unknown partitions refused at submit, the sinfo summary,
bad definitions refused at start; and fair-share usage surviving a
controller restart."""

import os
import pwd
import subprocess
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase, GantryCluster

SLEEPER = """#!/bin/bash
sleep 300
"""

BRIEF = """#!/bin/bash
sleep 1
"""

PARTITIONS = [
    "--partition", "PartitionName=gpu Nodes=node[01-02] Default=YES "
                   "DefaultTime=10:00 MaxTime=1:00:00 MaxNodes=2 State=UP",
    "--partition", "debug Nodes=node03 DefaultTime=0:02 MaxTime=0:30",
]


class PartitionsTest(ClusterTestCase):

    def refused(self, cluster, *args):
        result = cluster.cli("batch", "--parsable", *args, check=False)
        self.assertNotEqual(result.returncode, 0, result.stdout)
        return result.stderr

    def test_partitions_sort_nodes_and_limit_jobs(self):
        cluster = self.start_cluster(agents=3, gantryd_args=PARTITIONS)
        listing = cluster.cli_json("nodes")
        self.assertEqual(
            [(p["name"], p["default"], p["nodes"], p["default_time_seconds"],
              p["max_time_seconds"], p["max_nodes"])
             for p in listing["partitions"]],
            [("gpu", True, "node[01-02]", 600, 3600, 2),
             ("debug", False, "node03", 2, 30, 0)])
        by_name = {n["name"]: n for n in listing["nodes"]}
        self.assertEqual(by_name["node01"]["partitions"], ["gpu"])
        self.assertEqual(by_name["node03"]["partitions"], ["debug"])

        summary = cluster.cli("nodes").stdout
        self.assertRegex(summary, r"gpu\*\s+up\s+1:00:00\s+2\s+idle\s+node\[01-02\]")
        self.assertRegex(summary, r"debug\s+up\s+0:30\s+1\s+idle\s+node03")

        script = cluster.write_script("sleeper.sh", SLEEPER)
        # No -p: the default partition, its DefaultTime, its nodes.
        big = cluster.submit(script, "-N", "2", "--exclusive")
        job = cluster.wait_job(big, "RUNNING")
        self.assertEqual(job["partition"], "gpu")
        self.assertEqual(job["time_limit_seconds"], 600)
        self.assertEqual(sorted(a["node"] for a in job["allocation"]),
                         ["node01", "node02"])

        # The debug partition's node is free, but a gpu job may not use it.
        waiting = cluster.submit(script, "--time=5:00")
        gantry_cluster.wait_for(
            lambda: cluster.job(waiting)["reason"] == "Resources", 10,
            "the second gpu job to wait for resources")

        # Limits are checked at submit, with the limit named.
        self.assertIn("MaxTime=0:30", self.refused(
            cluster, "-p", "debug", "--time=1:00", script))
        self.assertIn("MaxNodes=2", self.refused(cluster, "-N", "3", script))
        self.assertIn("MaxTime=1:00:00", self.refused(
            cluster, "--time=2:00:00", script))
        message = self.refused(cluster, "-p", "nope", script)
        self.assertIn('invalid partition name "nope"', message)
        self.assertIn("gpu, debug", message)

        # A debug job without --time gets DefaultTime (2 s) and is ended
        # TIMEOUT by it, on the debug node.
        short = cluster.submit(script, "-p", "debug")
        job = cluster.wait_job(short, "TIMEOUT", timeout=30)
        self.assertEqual(job["time_limit_seconds"], 2)
        self.assertEqual([a["node"] for a in job["allocation"]], ["node03"])
        self.assertEqual(job["reason"], "TimeLimit")

        cluster.cli("cancel", str(big), str(waiting))
        cluster.wait_job(big, "CANCELLED")

    def test_bad_partition_definitions_stop_gantryd(self):
        cluster = GantryCluster(agents=0, label=self.id(), auth="none")
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        cases = [
            (["--partition", "gpu MaxTime=forever"], "MaxTime=forever"),
            (["--partition", "gpu Nodes=n[1-2] HotSpares=n7"],
             "hot spare n7 is not one of its Nodes"),
            (["--partition", "a", "--partition", "a Nodes=n1"],
             "defined twice"),
            (["--partition", "a Default=YES", "--partition", "b Default=YES"],
             "both say Default=YES"),
            (["--partition", "gpu Shared=YES"], 'unknown key "Shared"'),
        ]
        for flags, message in cases:
            result = subprocess.run(
                [cluster.gantryd_bin, "--auth", "none", "--state-dir",
                 os.path.join(cluster.dir, "never"), "--socket", "",
                 "--listen", "127.0.0.1:0", "--metrics-listen", "", *flags],
                capture_output=True, text=True, timeout=30)
            self.assertNotEqual(result.returncode, 0, (flags, result.stderr))
            self.assertIn(message, result.stderr, flags)
            # Nothing was created: the flags are checked before the state.
            self.assertFalse(os.path.exists(os.path.join(cluster.dir, "never")))
        # --check-config sees a bad line too.
        result = subprocess.run(
            [cluster.gantryd_bin, "--check-config", "--partition",
             "gpu MaxNodes=0"], capture_output=True, text=True, timeout=30)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("MaxNodes=0", result.stderr + result.stdout)

    @unittest.skipUnless(os.geteuid() == 0, "needs root to act as another user")
    def test_fair_share_usage_survives_a_restart(self):
        cluster = self.start_cluster(agents=1)
        # nobody needs to reach the socket and write in its own directory.
        os.chmod(cluster.dir, 0o755)
        other = pwd.getpwnam("nobody")
        other_dir = cluster.path("other")
        os.makedirs(other_dir)
        os.chown(other_dir, other.pw_uid, other.pw_gid)
        script = cluster.write_script("brief.sh", BRIEF)
        sleeper = cluster.write_script("sleeper.sh", SLEEPER)
        # root uses the node for a while; nobody never does.
        used = cluster.submit(script)
        cluster.wait_job(used, "COMPLETED")
        cluster.kill_controller()
        cluster.start_controller()
        cluster.wait_nodes_up([cluster.node_name(1)])
        # Hold the node so that the next two wait and get priorities.
        blocker = cluster.submit(sleeper, "--exclusive")
        cluster.wait_job(blocker, "RUNNING")
        mine = cluster.submit(sleeper)
        theirs = cluster.submit(sleeper, uid=other.pw_uid, cwd=other_dir)

        def priorities():
            return (cluster.job(mine)["priority"],
                    cluster.job(theirs)["priority"])
        gantry_cluster.wait_for(lambda: all(priorities()), 10,
                                "both waiting jobs to get a priority")
        mine_priority, theirs_priority = priorities()
        # The user with past usage ranks below the one without (the
        # fair-share factor is 10000 * 2^(-usage/mean)).
        self.assertGreater(theirs_priority, mine_priority + 1000)
        queue = cluster.cli("queue", "-o", "%i %Q").stdout.split("\n")
        self.assertIn(f"{theirs} {theirs_priority}", queue)
        cluster.cli("cancel", str(blocker), str(mine), str(theirs))


if __name__ == "__main__":
    gantry_cluster.main()
