#!/usr/bin/env python3
"""SubmitStream, many submissions on one call (client.proto), driven by
gantry-submit-bench --stream against the real gantryd: every acknowledged
submission is stored as submitted; a refused submission is answered alone
and the stream goes on; a busy gantryd answers "busy" and the client's
second try is stored; a stream without a credential, or with an oversized
message, is ended with the reason and stores nothing; a message whose
credential was made for another message ends the stream, and nothing of it
is stored. The kill -9 case is in test_kill9_durability.py."""

import os
import sys

import gantry_cluster
import test_metrics  # its scrape() and value(); its tests stay there
from gantry_cluster import ClusterTestCase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bench"))
import bench_support  # noqa: E402


class SubmitStreamTest(ClusterTestCase):

    def stream(self, client, count, *options, clients=4, check=True):
        """Runs `clients` stream clients until `count` submissions are
        answered; returns (exit code, summary, acks file)."""
        acks = os.path.join(client.cluster.dir, f"acks.{self.id()}")
        process = client.start("submit", "--clients", str(clients), "--count",
                               str(count), "--stream", "--acks", acks,
                               *options)
        code, summary = client.finish(process, timeout=120, check=check)
        return code, summary, acks

    def pending(self, cluster):
        return cluster.status()["jobs"]["pending"]

    def test_every_acknowledged_submission_is_stored_as_submitted(self):
        cluster = self.start_cluster(agents=0, metrics=True)
        client = bench_support.SubmitClient(cluster, "munge")
        _, summary, acks = self.stream(client, 3000, "--window", "500",
                                       "--batch", "50")
        self.assertEqual(summary["acknowledged"], 3000, summary)
        self.assertEqual(summary["errors"], {}, summary)
        _, verdict = client.run("verify", "--acks", acks)
        self.assertEqual(verdict["unique_ids"], 3000, verdict)
        self.assertEqual(verdict["mismatched"], 0, verdict["examples"])
        self.assertEqual(verdict["missing"], 0, verdict["examples"])
        self.assertEqual(self.pending(cluster), 3000)
        # Streams are counted though not intercepted (one per client).
        text = test_metrics.scrape(cluster.metrics_address())
        method = "gantry.v1.ClientService/SubmitStream"
        self.assertEqual(test_metrics.value(text, "gantry_rpc_started_total",
                                            method=method), 4)
        self.assertEqual(test_metrics.value(text, "gantry_rpc_handled_total",
                                            method=method, code="OK"), 4)

    def test_a_refused_submission_is_answered_alone(self):
        cluster = self.start_cluster(agents=0)
        client = bench_support.SubmitClient(cluster, "munge")
        # Every 10th submission asks for 2 nodes and 1 task: 100 of 1,000
        # (the --count includes them). One client, so that the count is
        # exact.
        code, summary, acks = self.stream(client, 1000, "--invalid-every",
                                          "10", "--batch", "25", clients=1,
                                          check=False)
        self.assertEqual(code, 1, "refusals it does not retry")
        self.assertEqual(summary["errors"], {"INVALID_ARGUMENT": 100}, summary)
        self.assertIn("is fewer than --nodes=2", summary["last_error"])
        self.assertEqual(summary["acknowledged"], 900, summary)
        _, verdict = client.run("verify", "--acks", acks)
        self.assertEqual(verdict["mismatched"], 0, verdict["examples"])
        self.assertEqual(verdict["missing"], 0, verdict["examples"])
        self.assertEqual(self.pending(cluster), 900)

    def test_a_busy_controller_answers_busy_and_the_retry_is_stored(self):
        cluster = self.start_cluster(
            agents=0, gantryd_args=["--max-pending-submissions", "64"])
        client = bench_support.SubmitClient(cluster, "munge")
        # 4 clients with 1,000 unanswered each against a gate of 64.
        _, summary, acks = self.stream(client, 4000, "--window", "1000",
                                       "--batch", "200")
        self.assertGreater(summary["errors"].get("RESOURCE_EXHAUSTED", 0), 0,
                           summary)
        self.assertEqual(set(summary["errors"]), {"RESOURCE_EXHAUSTED"},
                         summary)
        self.assertIn("gantryd is busy", summary["last_error"])
        self.assertEqual(summary["acknowledged"], 4000, summary)
        _, verdict = client.run("verify", "--acks", acks)
        self.assertEqual(verdict["unique_ids"], 4000, verdict)
        self.assertEqual(verdict["missing"], 0, verdict["examples"])
        self.assertEqual(self.pending(cluster), 4000)

    def test_a_stream_without_a_credential_is_refused(self):
        cluster = self.start_cluster(agents=0)
        client = bench_support.SubmitClient(cluster, "none")
        code, summary, _ = self.stream(client, 100, clients=1, check=False)
        self.assertNotEqual(code, 0)
        self.assertEqual(summary["errors"], {"UNAUTHENTICATED": 1}, summary)
        self.assertIn("no MUNGE credential", summary["last_error"])
        self.assertEqual(summary["acknowledged"], 0)
        self.assertEqual(self.pending(cluster), 0)
        self.assertIn("SubmitStream", cluster.controller.log_text())

    def test_a_message_with_a_credential_made_for_another_ends_the_stream(self):
        cluster = self.start_cluster(agents=0)
        client = bench_support.SubmitClient(cluster, "munge")
        # One message of 100 at a time: the first is stored; the second
        # carries a credential made for another message (its first
        # submission with one more argument), as one captured on the way
        # and carried on other submissions would.
        code, summary, _ = self.stream(client, 300, "--window", "100",
                                       "--batch", "100", "--misbind-message",
                                       "2", clients=1, check=False)
        self.assertNotEqual(code, 0)
        self.assertEqual(summary["errors"], {"UNAUTHENTICATED": 1}, summary)
        self.assertIn("made for a different SubmitStream request",
                      summary["last_error"])
        self.assertEqual(summary["acknowledged"], 100, summary)
        self.assertEqual(self.pending(cluster), 100)

    def test_a_message_of_too_many_submissions_ends_the_stream(self):
        cluster = self.start_cluster(agents=0)
        client = bench_support.SubmitClient(cluster, "munge")
        code, summary, _ = self.stream(client, 1001, "--window", "2000",
                                       "--batch", "1001", clients=1,
                                       check=False)
        self.assertNotEqual(code, 0)
        self.assertEqual(summary["errors"], {"INVALID_ARGUMENT": 1}, summary)
        self.assertIn("carries 1 to 1000 submissions, not 1001",
                      summary["last_error"])
        self.assertEqual(summary["acknowledged"], 0)
        self.assertEqual(self.pending(cluster), 0)
        # gantryd is unharmed: a well-formed stream goes through.
        _, summary, _ = self.stream(client, 100)
        self.assertEqual(summary["acknowledged"], 100, summary)


if __name__ == "__main__":
    gantry_cluster.main()
