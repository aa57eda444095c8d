#!/usr/bin/env python3
"""Goodput (ETTR) accounting with real binaries on loopback.

A two-node job reports progress and a checkpoint; one of its nodes is
killed a moment after the checkpoint; the job restarts on a healthy node,
reports progress again and completes. `gantry job ID --json` splits its
wall time into segments that add up to it, with the work since the
checkpoint lost, the time until the dead node was found detecting and the
time until the ranks ran again recovering; `gantry job ID` shows the line;
`gantry status` and gantryd's metrics show the cluster's ETTR over the last
day, which survives a controller restart after the job left the live state
(--min-job-age 1). Every process is stopped by the cluster."""

import os
import time

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, wait_for
from test_metrics import scrape, value

NODE_TIMEOUT = 2.0
SEGMENTS = ("queued", "preflight", "starting", "productive", "lost",
            "detecting", "recovering")


def script(cli):
    return "#!/bin/bash\n" + WAIT_FOR_FILE + f"""
if [ "$SLURM_PROCID" = 0 ]; then
  sleep 0.5
  {cli} progress --step 1 || exit 9
  if [ "$GANTRY_ATTEMPT" = 1 ]; then
    sleep 0.5
    mkdir -p "$GANTRY_CHECKPOINT_DIR/step1"
    {cli} checkpoint "$GANTRY_CHECKPOINT_DIR/step1" --step 1 || exit 9
    echo done > "checkpointed.$SLURM_JOB_ID"
  else
    echo done > "progressed.$SLURM_JOB_ID"
  fi
fi
echo "$SLURMD_NODENAME" > "rank.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$SLURM_PROCID"
wait_for_file "release.$GANTRY_ATTEMPT"
"""


class GoodputTest(ClusterTestCase):

    def test_a_node_failure_shows_as_lost_detecting_and_recovering(self):
        cluster = self.start_cluster(agents=3, node_timeout=NODE_TIMEOUT,
                                     metrics=True,
                                     gantryd_args=["--min-job-age", "1"])
        os.makedirs(cluster.path("ck"), exist_ok=True)
        cluster.write_script("train.sh", script(cluster.cli_bin))
        job_id = cluster.submit("train.sh", "-N", "2", "--max-restarts=2",
                                "--checkpoint-dir", "ck")
        cluster.wait_files([f"checkpointed.{job_id}", f"rank.{job_id}.1.1"])
        victim = cluster.read(f"rank.{job_id}.1.1").strip()
        # Work after the checkpoint, then thrown away with the node.
        time.sleep(1.0)
        cluster.kill_agent(victim)
        cluster.wait_files([f"progressed.{job_id}"], timeout=NODE_TIMEOUT + 20)
        record = cluster.job(job_id)
        self.assertEqual(record["attempt"], 2, record["attempts"])
        self.assertTrue(record["attempts"][0]["node_fault"], record["attempts"])
        cluster.touch("release.2")
        record = cluster.wait_job(job_id, "COMPLETED", timeout=20)

        goodput = record["goodput"]
        first, second = record["attempts"]
        for time_field in ("ranks_running_time", "first_progress_time",
                           "last_checkpoint_time", "fault_time"):
            self.assertIsNotNone(first[time_field], (time_field, first))
        self.assertIsNotNone(second["first_progress_time"], second)
        self.assertIsNone(second["fault_time"], second)
        # A second of work after the checkpoint, then the node's last
        # heartbeat (at most 0.2 s before the kill) to the fault.
        self.assertGreater(goodput["lost_seconds"], 0.7, goodput)
        self.assertLess(goodput["lost_seconds"], 5.0, goodput)
        # Silent until --node-timeout said it was down.
        self.assertGreater(goodput["detecting_seconds"], NODE_TIMEOUT - 0.5,
                           goodput)
        self.assertLess(goodput["detecting_seconds"], NODE_TIMEOUT + 3,
                        goodput)
        self.assertGreater(goodput["recovering_seconds"], 0, goodput)
        self.assertGreater(goodput["starting_seconds"], 0.5, goodput)
        self.assertGreater(goodput["productive_seconds"], 0.3, goodput)
        total = sum(goodput[f"{s}_seconds"] for s in SEGMENTS)
        self.assertAlmostEqual(total, goodput["total_seconds"], places=3)
        # The wall time, to the second the record's times are shown in.
        wall = (time.mktime(time.strptime(record["end_time"], "%Y-%m-%dT%H:%M:%S"))
                - time.mktime(time.strptime(record["submit_time"],
                                            "%Y-%m-%dT%H:%M:%S")))
        self.assertLess(abs(total - wall), 1.01, (total, wall, goodput))
        self.assertGreater(goodput["ettr"], 0, goodput)
        self.assertLess(goodput["ettr"], 1, goodput)

        # sacct reports the same figures, as --format fields sites can
        # script against (issue 35 point 4).
        cluster.add_slurm_commands()
        accounted = cluster.sh(
            f"sacct -j {job_id} -X -n -P -o "
            "JobID,ETTR,GoodputProductive,GoodputLost,GoodputDetecting,"
            "GoodputRecovering")
        self.assertEqual(accounted.returncode, 0, accounted.stderr)
        fields = accounted.stdout.strip().split("|")
        self.assertEqual(fields[0], str(job_id), accounted.stdout)
        self.assertAlmostEqual(float(fields[1]), goodput["ettr"], delta=0.002)

        def seconds(text):
            hours, minutes, secs = (int(x) for x in text.split(":"))
            return hours * 3600 + minutes * 60 + secs
        for field, segment in zip(fields[2:], ("productive", "lost",
                                               "detecting", "recovering")):
            self.assertLessEqual(
                abs(seconds(field) - goodput[f"{segment}_seconds"]), 1.0,
                (segment, field, goodput))

        text = cluster.cli("job", str(job_id)).stdout
        self.assertIn("Goodput: ETTR", text)
        print("\n" + next(line.strip() for line in text.splitlines()
                          if "Goodput:" in line))
        self.assertIn("lost ", text)

        def cluster_split():
            split = cluster.status()["goodput_last_day"]
            return split if split["lost_seconds"] > 0 else None
        # Refreshed every few seconds.
        split = wait_for(cluster_split, 15, "the job's time in gantry status")
        self.assertAlmostEqual(split["lost_seconds"], goodput["lost_seconds"],
                               delta=0.01)
        self.assertGreater(split["ettr"], 0, split)
        self.assertEqual(split["window_seconds"], 86400)
        self.assertIn("Goodput", cluster.cli("status").stdout)

        address = cluster.metrics_address()

        def scraped():
            text = scrape(address)
            lost = value(text, "gantry_goodput_last_day_seconds",
                         segment="lost")
            return text if lost and lost > 0 else None
        text = wait_for(scraped, 15, "the goodput gauges")
        self.assertGreater(value(text, "gantry_ettr_last_day"), 0)
        self.assertGreater(value(text, "gantry_goodput_seconds_total",
                                 segment="detecting"), NODE_TIMEOUT - 0.5)

        # Past --min-job-age the job leaves the live state; a restarted
        # controller still counts it in the last day.
        wait_for(lambda: str(job_id) not in cluster.cli(
            "queue", "--all").stdout, 15, "the job retired")
        time.sleep(1.5)  # the retirement's batch is written
        cluster.restart_controller()
        after = cluster.status()["goodput_last_day"]
        self.assertAlmostEqual(after["lost_seconds"], split["lost_seconds"],
                               delta=0.01)
        self.assertAlmostEqual(after["detecting_seconds"],
                               split["detecting_seconds"], delta=0.01)
        self.assertGreater(after["ettr"], 0, after)
        # `gantry job` reads it from the history now: the same split.
        self.assertEqual(cluster.job(job_id)["goodput"], goodput)


if __name__ == "__main__":
    gantry_cluster.main()
