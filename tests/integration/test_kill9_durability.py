#!/usr/bin/env python3
"""gantryd killed with SIGKILL in the middle of a flood of API submissions
(16 clients, each with its own connection: many submissions share each
group commit and some are in flight at the kill), then started again while
the flood goes on: every acknowledged submission is there with the spec it
was submitted with, and no job id was handed out twice; the same with
SubmitStream clients. The small version
of tests/bench/kill9_bench.py; test_controller_restart.py does the same
through the CLI, a process per submission."""

import os
import sys

import gantry_cluster
from gantry_cluster import ClusterTestCase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bench"))
import bench_support  # noqa: E402


class Kill9DurabilityTest(ClusterTestCase):

    def test_no_acknowledged_submission_is_lost_to_kill_9_mid_flood(self):
        self.check_flood_survives_kill_9(tag="k9")

    def test_no_acknowledged_stream_submission_is_lost_to_kill_9(self):
        # SubmitStream: hundreds unanswered per client at the kill; the
        # clients open new streams and send those again.
        self.check_flood_survives_kill_9(
            tag="k9s", options=("--stream", "--window", "500", "--batch",
                                "50"))

    def check_flood_survives_kill_9(self, tag, options=()):
        cluster = self.start_cluster(agents=0)
        client = bench_support.SubmitClient(cluster, "munge")
        acks, acks_path, killed_at, restarted_at, summary = (
            bench_support.flood_with_kill(cluster, client, clients=16,
                                          kill_at=1.0, down=0.3, after=1.0,
                                          tag=tag, options=options))
        # The kill must have landed mid-flood, or the test proves nothing.
        before = sum(1 for _, _, t in acks if t < killed_at)
        after = sum(1 for _, _, t in acks if t > restarted_at)
        self.assertGreater(before, 100, "acknowledged before the kill")
        self.assertGreater(after, 100, "acknowledged after the restart")
        self.assertGreater(summary["errors"].get("UNAVAILABLE", 0), 0,
                           "the clients saw the controller go away")
        result = bench_support.audit(cluster, client, acks, acks_path,
                                     killed_at, tag)
        self.assertEqual(result["lost"], 0, result["examples"])
        self.assertEqual(result["wrong"], 0, result["examples"])
        self.assertEqual(result["twice"], 0, result["examples"])
        self.assertEqual(result["unverified"], 0, result["examples"])
        # Ids keep growing across the restart.
        by_time = sorted(acks, key=lambda ack: ack[2])
        last_before = max(job_id for job_id, _, t in by_time if t < killed_at)
        first_after = min(job_id for job_id, _, t in by_time if t > restarted_at)
        self.assertGreater(first_after, last_before)


if __name__ == "__main__":
    gantry_cluster.main()
