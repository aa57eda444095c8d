#!/usr/bin/env python3
"""One user's history does not stall the controller (issue #34, point 3).

A history of jobs with megabytes of script arguments each (as a user may
store within every per-request limit) is written into gantryd's state dir
by gantry-history-fill, as a gantryd from before the history's expiry
index left it (an upgraded site: the new gantryd indexes it first, off the
loop): half of it ended long past the shipped --history-retention (30
days), half an hour ago. gantryd starts on
it with the shipped defaults, expires the old half and answers an `sacct`
over the rest; meanwhile another user's `gantry queue` keeps answering
quickly, and the controller's loop never logs that it was stalled. Before,
expiry read whole records on the loop (every minute, for the whole
retention) and sacct read a page of the history there too.
"""

import os
import pwd
import re
import secrets
import subprocess
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase, GantryCluster, wait_for
from quick_calls import QuickCalls

# 2 MiB of arguments per job (the per-task limit on arguments), 120 jobs
# to expire and 120 to keep: 480 MiB, about the report's, which the old
# code read on the loop at start (expiry: a 2.6 s stall with 320 MiB on
# the 2-core development machine) and again for one sacct.
ARG_BYTES = 2 << 20
EXPIRED_JOBS = 120
KEPT_JOBS = 120
FORTY_DAYS_S = 40 * 24 * 3600
# Another user's `gantry queue` (a process start and one call) stays under
# this on a loaded machine; the old stall was several times longer.
QUICK_CALL_BOUND_S = 3.0
# The loop watchdog logs any turn over 0.5 s; on a 2-core machine running
# tests in parallel a starved process can see that much, while the reads
# of the whole history on the loop cost 2.6 s and more.
STALL_TOLERANCE_MS = 1500
STALL_LINE = re.compile(r"controller loop was stalled[^\n]*stalled_ms=(\d+)")


def run(*argv):
    subprocess.run(argv, check=True, capture_output=True, text=True)


@unittest.skipUnless(os.geteuid() == 0, "needs root to create a user")
class HistoryStallTest(ClusterTestCase):

    @classmethod
    def setUpClass(cls):
        cls.user = f"gthist{secrets.token_hex(4)}"
        run("useradd", "-M", "-U", "-s", "/bin/sh", cls.user)
        cls.addClassCleanup(subprocess.run, ["userdel", cls.user],
                            capture_output=True)
        cls.uid = pwd.getpwnam(cls.user).pw_uid

    def fill(self, cluster, count, *args):
        tool = os.path.join(gantry_cluster.build_dir(), "tests", "tools",
                            "gantry-history-fill")
        out = subprocess.run(
            [tool, cluster.state_dir, str(count), "--arg-bytes",
             str(ARG_BYTES), *args],
            check=True, capture_output=True, text=True, timeout=300)
        first, last = (int(n) for n in out.stdout.split())
        return list(range(first, last + 1))

    def test_expiry_and_sacct_of_a_big_history_leave_the_loop_free(self):
        cluster = GantryCluster(agents=0, label=self.id())
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        expired = self.fill(cluster, EXPIRED_JOBS, "--ended-ago",
                            str(FORTY_DAYS_S), "--without-index")
        kept = self.fill(cluster, KEPT_JOBS, "--without-index")
        controller = cluster.start_controller()
        # The user reaches the socket.
        os.chmod(cluster.dir, 0o755)
        quick = QuickCalls(cluster, self.uid)
        try:
            # Expiry runs from the first second on.
            wait_for(lambda: "invalid job id" in cluster.cli(
                "job", str(expired[-1]), check=False).stderr,
                120, "the expired jobs to be deleted", interval=0.5)
            for job in (expired[0], expired[len(expired) // 2]):
                self.assertIn("invalid job id", cluster.cli(
                    "job", str(job), check=False).stderr)
            # sacct over the whole history, as an admin (who reads it all).
            listed = cluster.cli(
                "acct", "-a", "-X", "-S", "2000-01-01", "-P", "-n",
                "--format=JobIDRaw", timeout=120).stdout.split()
            self.assertEqual([int(i) for i in listed], kept)
            # Pages of 64 MiB of history at most, each printed as it
            # arrives: one header above them all, every job once.
            with_header = cluster.cli(
                "acct", "-a", "-X", "-S", "2000-01-01", "-P",
                "--format=JobIDRaw", timeout=120).stdout.split()
            self.assertEqual(with_header, ["JobIDRaw"] + [str(i) for i in kept])
            # The user asking for theirs is not shown the others'.
            own = cluster.cli("acct", "-X", "-S", "2000-01-01", "-P", "-n",
                              "--format=JobIDRaw", uid=self.uid,
                              timeout=120).stdout
            self.assertEqual(own.strip(), "")
        finally:
            quick.stop()
        self.assertGreater(len(quick.calls), 3, "too few quick calls ran")
        self.assertEqual(quick.failures(), [])
        slowest = quick.slowest()
        self.assertLess(
            slowest, QUICK_CALL_BOUND_S,
            f"another user's gantry queue took {slowest:.2f} s "
            f"({len(quick.calls)} calls)")
        stalls = [int(ms) for ms in STALL_LINE.findall(controller.log_text())
                  if int(ms) > STALL_TOLERANCE_MS]
        self.assertEqual(stalls, [], "gantryd's loop was stalled (ms)")


if __name__ == "__main__":
    gantry_cluster.main()
