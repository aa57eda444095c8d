"""Slurm's node-order contract on every attempt: node i of a job (its
SLURM_NODEID, its ranks) is the i-th host of SLURM_JOB_NODELIST as scripts
expand it, and the first host is the batch host and MASTER_ADDR. Training
scripts compute their rendezvous with

    MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)

and would wait forever on a host where rank 0 is not. A restart onto a hot
spare numbered above the failed node used to put rank 0 on the spare.

Run: python3 tests/integration/test_node_order.py --build-dir build
"""
import os

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, wait_for

# Each rank writes, per attempt: its rank, SLURM_NODEID, its node,
# MASTER_ADDR, the list's first host and the list's SLURM_NODEID-th host,
# the last two found as public scripts find them.
RANK_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
hosts=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
head=$(echo "$hosts" | head -n1)
mine=$(echo "$hosts" | sed -n "$((SLURM_NODEID + 1))p")
echo "$SLURM_PROCID $SLURM_NODEID $SLURMD_NODENAME $MASTER_ADDR $head $mine" \\
  > "order.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$SLURM_PROCID"
wait_for_file "release.$SLURM_JOB_ID"
"""


class NodeOrderTest(ClusterTestCase):

    def attempt_ranks(self, cluster, job, attempt, count):
        """{rank: (node id, node, MASTER_ADDR, head, list's own host)} of
        the attempt, once all `count` ranks have written theirs."""
        def written():
            names = [cluster.path(f"order.{job}.{attempt}.{rank}")
                     for rank in range(count)]
            if not all(os.path.exists(name) for name in names):
                return None
            rows = {}
            for name in names:
                with open(name) as f:
                    fields = f.read().split()
                if len(fields) != 6:
                    return None
                rows[int(fields[0])] = (int(fields[1]), *fields[2:])
            return rows
        return wait_for(written, 60, f"every rank of attempt {attempt}")

    def assert_contract(self, cluster, job, rows):
        for rank, (node_id, node, master, head, listed) in rows.items():
            self.assertEqual(node, listed,
                             f"rank {rank} runs on {node}, but host "
                             f"{node_id} of the list is {listed}")
            self.assertEqual(master, cluster.addresses[head],
                             f"rank {rank}'s MASTER_ADDR is not {head}'s")
        rank0_node = rows[0][1]
        self.assertEqual(rank0_node, rows[0][3], "rank 0 is not on the "
                         "first host of SLURM_JOB_NODELIST")
        shown = cluster.sh(f"scontrol show job {job}")
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertIn(f"BatchHost={rank0_node}", shown.stdout)

    def test_restart_onto_a_spare_numbered_above_the_failed_node(self):
        cluster = self.start_cluster(agents=5, hot_spares="node05",
                                     node_timeout=2.0,
                                     heartbeat_interval=0.5)
        cluster.add_slurm_commands()
        script = cluster.write_script("ranks.sh", RANK_SCRIPT)
        job = cluster.submit(script, "-N", "4", "--max-restarts=2")
        cluster.wait_job(job, "RUNNING", timeout=60)
        first = cluster.job(job)["attempt"]
        rows = self.attempt_ranks(cluster, job, first, 4)
        self.assert_contract(cluster, job, rows)
        self.assertEqual(rows[0][1], "node01")
        cluster.kill_agent("node01")

        def restarted():
            record = cluster.job(job)
            return (record["attempt"] > first and
                    record["state"] == "RUNNING" and record["attempt"])
        second = wait_for(restarted, 60, "the restart on the spare")
        rows = self.attempt_ranks(cluster, job, second, 4)
        self.assertEqual(sorted(node for _, node, *_ in rows.values()),
                         ["node02", "node03", "node04", "node05"])
        self.assert_contract(cluster, job, rows)
        self.assertEqual(rows[0][1], "node02")
        self.assertEqual(rows[3][1], "node05")
        cluster.touch(f"release.{job}")
        cluster.wait_job(job, "COMPLETED", timeout=60)


if __name__ == "__main__":
    gantry_cluster.main()
