#!/usr/bin/env python3
"""Datasets staged ahead while a job waits for its backfill reservation
(gantryd --stage-ahead): on 2 nodes, a running job holds node01 with a
time limit; a 2-node job reading a dataset waits with a reservation on
both nodes, and before the first job ends its dataset is already in both
nodes' caches (the files under each agent's cache dir, and `gantry job`
showing each node's copy done). When the waiting job starts, its staging
is a hit on every node: nothing copied. gantryd sends each node the
prefetch once; a restarted gantryd, which keeps no record of it, sends it
again and the agents answer with a hit. Agents never prefetch as root, so the waiting job is
another user's: needs root. Every process is stopped by the cluster."""

import os
import pwd
import re
import unittest

import gantry_cluster
from gantry_cluster import ClusterTestCase

MIB = 1 << 20
OTHER_USER = "nobody"

HOLDER = """#!/bin/bash
# Holds its node until the test lets it go.
while [ ! -e "$1" ]; do sleep 0.1; done
"""

READER = """#!/bin/bash
cat "$GANTRY_DATASET_train"/*.bin | wc -c > "$1/read-$SLURM_PROCID"
"""


@unittest.skipUnless(os.geteuid() == 0, "needs root to act as another user")
class DatasetStageAheadTest(ClusterTestCase):

    def setUp(self):
        self.cluster = self.start_cluster(agents=2)
        self.shared = self.cluster.path("shared", "train")
        os.makedirs(self.shared)
        for i in range(2):
            with open(os.path.join(self.shared, f"part{i}.bin"), "wb") as f:
                f.write(bytes([97 + i]) * MIB)
        self.total = 2 * MIB

    def cached_copies(self, node):
        """Paths of part0.bin under the agent's cache dir (no partial
        copies)."""
        cache = os.path.join(self.cluster.dir, "agents", node, "datasets")
        found = []
        for root, _, files in os.walk(cache):
            if ".partial" not in root and "part0.bin" in files:
                found.append(os.path.join(root, "part0.bin"))
        return found

    def test_waiting_job_finds_its_dataset_cached_on_its_reserved_nodes(self):
        release = self.cluster.path("release")
        holder = self.cluster.write_script("holder.sh", HOLDER)
        # The time limit is what gives the waiting job a reservation.
        holder_id = self.cluster.submit(
            holder, "--nodelist=node01", "--exclusive", "--time=5:00",
            args=(release,))
        self.cluster.wait_job(holder_id, "RUNNING")
        # The waiting job is another user's, who can read the dataset.
        other = pwd.getpwnam(OTHER_USER)
        os.chmod(self.cluster.dir, 0o755)
        out = self.cluster.path("user")
        os.makedirs(out)
        os.chown(out, other.pw_uid, other.pw_gid)
        reader = self.cluster.write_script("reader.sh", READER, directory=out)
        waiting_id = self.cluster.submit(
            reader, "-N", "2", "--exclusive", f"--dataset=train:{self.shared}",
            args=(out,), cwd=out, uid=other.pw_uid)

        def staged_ahead():
            job = self.cluster.job(waiting_id)
            self.assertEqual(job["state"], "PENDING", job)
            done = {e["node"] for e in job["staged_ahead"]
                    if e["state"] == "done"}
            return job if done == {"node01", "node02"} else None

        def sent_to(controller):
            """The nodes `controller` logged a prefetch to, in order."""
            return re.findall(r'msg="dataset staged ahead".* node=(\S+)',
                              controller.log_text())

        job = gantry_cluster.wait_for(staged_ahead, 30,
                                      "the dataset staged ahead on both nodes")
        self.assertIn("reserved 2 node(s)", job["reason_detail"])
        for entry in job["staged_ahead"]:
            self.assertEqual(entry["dataset"], "train")
            self.assertEqual(entry["bytes_total"], self.total, entry)
            self.assertEqual(entry["bytes_copied"], self.total, entry)
        # In each node's cache before the holder ends, node01's too,
        # where the holder still runs.
        self.assertEqual(self.cluster.job(holder_id)["state"], "RUNNING")
        for node in ("node01", "node02"):
            copies = self.cached_copies(node)
            self.assertEqual(len(copies), 1, f"{node}: {copies}")
            self.assertEqual(os.path.getsize(copies[0]), MIB)
        shown = self.cluster.cli("job", str(waiting_id)).stdout
        for node in ("node01", "node02"):
            self.assertIn(f"StagedAhead={node}:train done {self.total} bytes "
                          f"Copied={self.total}", shown)

        self.assertEqual(sorted(sent_to(self.cluster.controller)),
                         ["node01", "node02"])

        # gantryd restarts and forgets what it sent: it sends again, and the
        # copies there are hits.
        self.cluster.restart_controller()
        job = gantry_cluster.wait_for(staged_ahead, 30,
                                      "the prefetches after a restart")
        for entry in job["staged_ahead"]:
            self.assertEqual(entry["bytes_copied"], 0, entry)
            self.assertEqual(entry["bytes_total"], self.total, entry)

        # The holder ends; the waiting job starts on its reserved nodes and
        # finds the copies there.
        open(release, "w").close()
        self.cluster.wait_job(holder_id, "COMPLETED")
        job = self.cluster.wait_job(waiting_id, "COMPLETED", timeout=60)
        self.assertEqual(sorted(job["attempts"][-1]["nodes"]),
                         ["node01", "node02"])
        staging = job["dataset_staging"]
        self.assertEqual(sorted(e["node"] for e in staging),
                         ["node01", "node02"], staging)
        for entry in staging:
            self.assertTrue(entry["done"] and entry["hit"], entry)
            self.assertEqual(entry["bytes_copied"], 0, entry)
            self.assertEqual(entry["bytes_total"], self.total, entry)
        for rank in (0, 1):
            with open(os.path.join(out, f"read-{rank}")) as f:
                self.assertEqual(int(f.read()), self.total)
        # Nothing is shown for a job that no longer waits.
        self.assertEqual(job["staged_ahead"], [])
        # One prefetch per node: later passes did not send again.
        self.assertEqual(sorted(sent_to(self.cluster.controller)),
                         ["node01", "node02"])


if __name__ == "__main__":
    gantry_cluster.main()
