#!/usr/bin/env python3
"""The checkpoint interval Gantry gives a job (GANTRY_CHECKPOINT_INTERVAL,
`gantry job`), with gantryd's shipped defaults.

A one-node job's first attempt gets the Young/Daly optimum for the
assumed checkpoint cost (--checkpoint-cost, 30 s) and the site's node
MTBF (--node-mtbf-hours, 6,329 h); it writes a checkpoint over about two
seconds, reports it with `gantry checkpoint` (which measures the write
from the files' times), and fails. The restart gets the interval for the
measured cost, and `gantry job` says what it was computed from. Every
process is stopped by the cluster."""

import math

import gantry_cluster
from gantry_cluster import ClusterTestCase

NODE_MTBF_HOURS = 6329  # gantryd's default
ASSUMED_COST = 30.0  # gantryd's default --checkpoint-cost


def daly(cost, mtbf):
    """daemon/scheduler/checkpoint_interval.h, for 2 cost < mtbf."""
    ratio = cost / (2 * mtbf)
    return math.sqrt(2 * cost * mtbf) * (1 + math.sqrt(ratio) / 3 + ratio / 9) - cost


def script(cli):
    return f"""#!/bin/bash
echo "$GANTRY_ATTEMPT ${{GANTRY_CHECKPOINT_INTERVAL:-unset}}" >> "interval.$SLURM_JOB_ID"
if [ "$GANTRY_ATTEMPT" = 1 ]; then
  mkdir -p "ck.$SLURM_JOB_ID/step1"
  echo meta > "ck.$SLURM_JOB_ID/step1/meta.json"
  sleep 2
  echo weights > "ck.$SLURM_JOB_ID/step1/weights.pt"
  {cli} checkpoint "ck.$SLURM_JOB_ID/step1" --step 1 || exit 9
  exit 3
fi
"""


class CheckpointIntervalTest(ClusterTestCase):

    def test_interval_from_the_assumed_then_the_measured_cost(self):
        cluster = self.start_cluster(agents=1)
        cluster.write_script("train.sh", script(cluster.cli_bin))
        job_id = cluster.submit("train.sh", "--max-restarts=1")
        job = cluster.wait_job(job_id, "COMPLETED", timeout=60)
        intervals = dict(line.split() for line in
                         cluster.read(f"interval.{job_id}").splitlines())
        mtbf = NODE_MTBF_HOURS * 3600
        self.assertAlmostEqual(int(intervals["1"]), daly(ASSUMED_COST, mtbf),
                               delta=0.01 * daly(ASSUMED_COST, mtbf))
        cost = job["checkpoint_cost_seconds"]
        self.assertGreaterEqual(cost, 1.8, job["latest_checkpoint"])
        self.assertLess(cost, 15, job["latest_checkpoint"])
        self.assertEqual(job["latest_checkpoint"]["write_seconds"], cost)
        self.assertAlmostEqual(int(intervals["2"]), daly(cost, mtbf),
                               delta=0.01 * daly(cost, mtbf))
        self.assertEqual(job["checkpoint_interval_seconds"], int(intervals["2"]))
        self.assertIn("measured", job["checkpoint_interval_basis"])
        shown = cluster.cli("job", str(job_id)).stdout
        self.assertIn(f"CheckpointInterval={intervals['2']} (Young/Daly: a "
                      f"{cost:.1f} s checkpoint (measured), 1 node(s)", shown)


if __name__ == "__main__":
    gantry_cluster.main()
