#!/usr/bin/env python3
"""Nodes that fail together cost a job one restart, not a cascade.

A 64-node job runs on simulated nodes (gantry-agent --simulate). Eight of
its nodes fail within a second, in a mix: four stop answering (their agent
frozen, found by the heartbeat timeout) and four lose their agent (kill -9,
found by the dropped stream). The restart uses the failed attempt's other
nodes only once heard from after the fault, so it avoids the failed nodes
not yet found: the job restarts once, on the healthy nodes plus spares,
and all eight failed nodes end down and drained. Every fleet is stopped by pid."""

import os
import signal
import time

import gantry_cluster
from gantry_cluster import ClusterTestCase, expand_hostlist, wait_for

STEADY, FROZEN, KILLED, SPARES = 56, 4, 4, 16


def start_fleet(cluster, name, count, first):
    """`count` simulated nodes named sim<first>..., as agent `name`."""
    argv = [cluster.agent_bin,
            "--controller", f"127.0.0.1:{cluster.port}",
            "--simulate", str(count), "--simulate-first", str(first),
            "--simulate-rank-seconds", "3600"]
    if cluster.munged:
        argv += ["--munge-socket", cluster.munged.socket]
    log_path = os.path.join(cluster.dir, f"agent-{name}.1.log")
    cluster.agents[name] = gantry_cluster._Daemon(name, argv, log_path,
                                                  cluster.env)
    return cluster.agents[name]


def names(first, count):
    return [f"sim{i:05d}" for i in range(first, first + count)]


def correlated_failure_round(cluster):
    """On a started cluster without agents: fleets for the job's nodes, a
    running job on all of them, spares, then eight of its nodes failing
    within a second. Returns (seconds from the last failure to the job
    running again, the failed node names)."""
    start_fleet(cluster, "steady", STEADY, 1)
    start_fleet(cluster, "frozen", FROZEN, STEADY + 1)
    start_fleet(cluster, "killed", KILLED, STEADY + FROZEN + 1)
    job_nodes = STEADY + FROZEN + KILLED
    cluster.wait_nodes_up(names(1, job_nodes), timeout=60)
    job = int(cluster.cli("batch", "--parsable", "-N", str(job_nodes),
                          "--max-restarts=5", "--wrap",
                          "sleep inf").stdout.strip())
    cluster.wait_job(job, "RUNNING")
    # Spares join once the job holds its nodes, so it started on the
    # nodes that will fail.
    start_fleet(cluster, "spares", SPARES, job_nodes + 1)
    cluster.wait_nodes_up(names(job_nodes + 1, SPARES), timeout=60)

    frozen = cluster.agents["frozen"]
    frozen.send(signal.SIGSTOP)
    time.sleep(0.8)
    cluster.agents["killed"].kill()
    failed_at = time.monotonic()

    def running_again():
        record = cluster.job(job)
        return record["state"] == "RUNNING" and record["attempt"] >= 2
    wait_for(running_again, 30, "the job running again", 0.05)
    return job, time.monotonic() - failed_at, names(STEADY + 1, FROZEN + KILLED)


class CorrelatedFailureTest(ClusterTestCase):

    def test_eight_nodes_failing_within_a_second_cost_one_restart(self):
        cluster = self.start_cluster(agents=0, node_timeout=2.0,
                                     heartbeat_interval=0.5)
        try:
            job, took, failed = correlated_failure_round(cluster)
            # Long enough for any failed node still unnoticed to be found.
            time.sleep(2 * cluster.node_timeout)
            record = cluster.job(job)
            self.assertEqual((record["state"], record["attempt"]),
                             ("RUNNING", 2),
                             f"a cascade of restarts: {record['reason_detail']}")
            placed = set(expand_hostlist(record["nodelist"]))
            self.assertEqual(len(placed), STEADY + FROZEN + KILLED)
            self.assertEqual(placed & set(failed), set())
            nodes = cluster.nodes()
            for name in failed:
                self.assertEqual((nodes[name]["state"], nodes[name]["drained"]),
                                 ("down", True), name)
            print(f"\nrunning again {took:.2f} s after the last failure, "
                  f"after one restart")
        finally:
            # A stopped process cannot stop itself when asked.
            if "frozen" in cluster.agents:
                cluster.agents["frozen"].send(signal.SIGKILL)


if __name__ == "__main__":
    gantry_cluster.main()
