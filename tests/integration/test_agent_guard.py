#!/usr/bin/env python3
"""Agent streams that misbehave: one that floods heartbeats, and ones that
send garbage (bytes that are no message, a heartbeat before registering, a
message of no kind, a second registration under another name, an absurd
inventory, an oversized message, an exit report for a rank another node
runs). gantry-rogue-agent (tests/tools) opens real streams to gantryd and
does each. gantryd cuts each such stream with an error status and one
logged line naming the node, the peer and the reason; the rogue's node is
then unreachable like any other that lost its stream, and a flooder that
comes back and floods again is cut again. Meanwhile a real agent's node
stays up and its job runs to completion."""

import os
import re
import subprocess
import urllib.request

import gantry_cluster
from gantry_cluster import WAIT_FOR_FILE, ClusterTestCase, build_dir

ROGUE = "rogue01"
CUT_LINE = re.compile(r'msg="agent stream cut" node=(\S*) peer=(\S+) reason=(.*)$')

RESOURCE_EXHAUSTED = 8
INVALID_ARGUMENT = 3

# Waits for `release`, then ends well: the job must not be failed by the
# rogue's exit report for its rank.
JOB_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo "$SLURMD_NODENAME" > "started.$SLURM_JOB_ID"
wait_for_file release
"""


def rogue_binary():
    return os.path.join(build_dir(), "tests", "tools", "gantry-rogue-agent")


class AgentGuardTest(ClusterTestCase):

    def rogue(self, cluster, *args):
        """Runs gantry-rogue-agent; returns [(code, message)] per stream."""
        result = subprocess.run(
            [rogue_binary(), f"127.0.0.1:{cluster.port}", ROGUE, *args],
            env=cluster.env, capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0,
                         f"rogue {args} was not cut:\n{result.stdout}"
                         f"{result.stderr}")
        streams = []
        for line in result.stdout.splitlines():
            code, message = line.split(": ", 1)
            streams.append((int(code), message))
        return streams

    def cut_lines(self, cluster):
        """(node, peer, reason) of each "agent stream cut" line."""
        lines = []
        for line in cluster.controller.log_text().splitlines():
            match = CUT_LINE.search(line)
            if match:
                lines.append(match.groups())
        return lines

    def test_flooder_and_garbage_are_cut_and_the_good_node_carries_on(self):
        cluster = self.start_cluster(agents=1, metrics=True)
        script = cluster.write_script("wait.sh", JOB_SCRIPT)
        job_id = cluster.submit(script, "-N", "1")
        cluster.wait_job(job_id, "RUNNING")
        cluster.wait_files([f"started.{job_id}"])

        # A flooder, three times over: cut each time it comes back.
        for code, message in self.rogue(cluster, "flood", "3"):
            self.assertEqual(code, RESOURCE_EXHAUSTED, message)
            self.assertIn("flooding", message)
        rogue_node = cluster.nodes()[ROGUE]
        self.assertIn("agent stream cut: flooding", rogue_node["reason"])
        self.assertNotEqual(rogue_node["state"], "up")

        expected = {
            "bytes": (INVALID_ARGUMENT, "not an AgentMessage"),
            "no-register": (INVALID_ARGUMENT, "first message is not a registration"),
            "empty": (INVALID_ARGUMENT, "no kind"),
            "rename": (INVALID_ARGUMENT, f"registration as {ROGUE}-other"),
            "absurd": (INVALID_ARGUMENT, "inventory of"),
            "oversized": (RESOURCE_EXHAUSTED, "bytes (the limit is 1048576)"),
        }
        for kind, (want_code, want_text) in expected.items():
            [(code, message)] = self.rogue(cluster, "garbage", kind)
            self.assertEqual(code, want_code, f"{kind}: {message}")
            self.assertIn(want_text, message, kind)
        # An exit report for the good node's rank: refused, not applied.
        [(code, message)] = self.rogue(cluster, "garbage", "foreign-rank",
                                       str(job_id), "0")
        self.assertEqual(code, INVALID_ARGUMENT, message)
        self.assertIn(f"does not run on {ROGUE}", message)

        # One line per cut, with the node (unless it sent no registration),
        # the peer and the reason.
        cuts = self.cut_lines(cluster)
        self.assertEqual(len(cuts), 3 + len(expected) + 1,
                         "\n".join(map(str, cuts)))
        for node, peer, reason in cuts:
            self.assertIn(node, (ROGUE, '""'))
            self.assertTrue(peer.startswith("ipv4:127.0.0.1:"), peer)
            self.assertNotEqual(reason.strip('"'), "")
        self.assertEqual([c[0] for c in cuts].count('""'), 2,
                         "only bytes and no-register name no node")
        self.assertEqual(sum(1 for c in cuts if "flooding" in c[2]), 3)
        self.assertTrue(any("does not run on" in c[2] for c in cuts))
        # The streams' ends are in the RPC metrics, by status code.
        with urllib.request.urlopen(
                f"http://{cluster.metrics_address()}/metrics",
                timeout=5) as reply:
            metrics = reply.read().decode()
        connect = 'gantry_rpc_handled_total{code="%s",method="gantry.v1.AgentService/Connect"} %d'
        self.assertIn(connect % ("RESOURCE_EXHAUSTED", 4), metrics)
        self.assertIn(connect % ("INVALID_ARGUMENT", 6), metrics)

        # The good node never lost its stream, and its job ends well.
        self.assertTrue(cluster.controller.running())
        self.assertEqual(cluster.nodes()["node01"]["state"], "up")
        cluster.touch("release")
        job = cluster.wait_job(job_id, "COMPLETED")
        self.assertEqual(job["exit_code"], 0)
        self.assertNotIn("controller stream ended",
                         cluster.agents["node01"].log_text())
        self.assertNotIn('msg="node down" node=node01',
                         cluster.controller.log_text())


if __name__ == "__main__":
    gantry_cluster.main()
