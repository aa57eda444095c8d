#!/usr/bin/env python3
"""The lab's checker (checker.py) on made-up histories: it passes a clean
one and names each violation it is meant to catch. Needs no root."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import checker  # noqa: E402
import gantry_cluster  # noqa: E402
from unit_runner import expand_command, parse_environment_file  # noqa: E402

ACKS = [{"tag": "t1", "uid": 1001, "job_id": 1},
        {"tag": "t2", "uid": 1002, "job_id": 2},
        {"tag": "t3", "uid": 1001, "job_id": None}]


def start(job_id, tag, uid, attempt=0, rank=0):
    return {"host": "node01", "job_id": job_id, "attempt": attempt,
            "rank": rank, "uid": uid, "tag": tag, "time": 0.0}


CLEAN_STARTS = [start(1, "t1", 1001), start(1, "t1", 1001, rank=1),
                start(2, "t2", 1002), start(2, "t2", 1002, attempt=1)]
FINAL = {1: {"state": "COMPLETED"}, 2: {"state": "COMPLETED"}}
NODES = {"node01": {"drained": False}}
PUTS = [("/gantry/log/1", 1, 5), ("/gantry/log/2", 1, 6)]


class CheckerTest(unittest.TestCase):
    def violated(self, acks=ACKS, starts=CLEAN_STARTS, final=FINAL,
                 nodes=NODES, puts=PUTS):
        verdicts, _ = checker.check(acks, starts, final, nodes, puts)
        return sorted(p for p, found in verdicts.items() if found)

    def test_clean_history_holds(self):
        self.assertEqual(self.violated(), [])

    def test_each_violation_is_named(self):
        self.assertEqual(self.violated(final={1: FINAL[1]}),
                         ["acked_jobs_not_lost"])
        self.assertEqual(self.violated(starts=CLEAN_STARTS[:2]),
                         ["acked_jobs_not_lost"])
        self.assertEqual(
            self.violated(starts=CLEAN_STARTS + [start(2, "t3", 1001, rank=5)]),
            ["job_ids_unique"])
        self.assertEqual(
            self.violated(starts=CLEAN_STARTS + [start(1, "t1", 1001)]),
            ["ranks_once_per_attempt"])
        self.assertEqual(self.violated(puts=PUTS + [("/gantry/log/2", 2, 9)]),
                         ["one_writer_in_etcd"])
        self.assertEqual(self.violated(nodes={"node01": {"drained": True}}),
                         ["no_healthy_node_drained"])
        self.assertEqual(
            self.violated(starts=CLEAN_STARTS + [start(1, "t1", 0, rank=2)]),
            ["ranks_as_submitter"])


class UnitRunnerTest(unittest.TestCase):
    def test_exec_start_expands_as_systemd_does(self):
        environment = parse_environment_file(
            '# per host\nGANTRYD_ARGS="--name ctl1 --advertise ctl1:6817"\n')
        self.assertEqual(
            expand_command("/usr/sbin/gantryd --config=/etc/gantry/gantry.toml"
                           " $GANTRYD_ARGS", environment),
            ["/usr/sbin/gantryd", "--config=/etc/gantry/gantry.toml",
             "--name", "ctl1", "--advertise", "ctl1:6817"])
        self.assertEqual(expand_command("a ${GANTRYD_ARGS} $MISSING", environment),
                         ["a", "--name ctl1 --advertise ctl1:6817"])


if __name__ == "__main__":
    gantry_cluster.main()
