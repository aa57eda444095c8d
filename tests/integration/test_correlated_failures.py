#!/usr/bin/env python3
"""Nodes that fail together cost a job one restart, not a cascade.

A 64-node job runs on simulated nodes (gantry-fleet). Eight of
its nodes fail within a second, in a mix: four stop answering (their agent
frozen, found by the heartbeat timeout) and four lose their agent (kill -9,
found by the dropped stream). The restart uses the failed attempt's other
nodes only once heard from after the fault has settled (they are probed
then), so it avoids the failed nodes not yet found: the job restarts once,
on the healthy nodes plus spares, and all eight failed nodes end down and
drained.

The same on real gantry-agent processes, each describing a real 4xH100
server (hwloc XML from ../shared/data) with its GPUs in a fake sysfs tree:
a 12-node job loses four nodes within a second, one each way a node
fails in the field and here: a GPU gone from the PCI bus (DEGRADED at its
next heartbeat), an agent frozen (heartbeat timeout), two agents killed
(dropped stream). One restart, on the survivors and the hot spares, every
rank running again. HCA ports going down take the GPU's path (a health
problem in the heartbeat) but need a real HCA to happen. Every process is
stopped by pid."""

import glob
import os
import signal
import time

import gantry_cluster
from gantry_cluster import (H100_XML, WAIT_FOR_FILE, ClusterTestCase,
                            GantryCluster, expand_hostlist,
                            h100_node_with_fake_sysfs, pull_gpu, wait_for)

STEADY, FROZEN, KILLED, SPARES = 56, 4, 4, 16


def start_fleet(cluster, name, count, first):
    """`count` simulated nodes named sim<first>..., as agent `name`."""
    return cluster.start_fleet(count, "--first", str(first),
                               "--rank-seconds", "3600", name=name)


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


# Each rank says where it runs, per attempt, then waits for `release`.
RANK_SCRIPT = """#!/bin/bash
""" + WAIT_FOR_FILE + """
echo "$SLURMD_NODENAME" > "ran.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$SLURM_PROCID"
wait_for_file release
"""


def real_agent_cluster(job_nodes, spares, **options):
    """A cluster (not started) of job_nodes + spares real agents, the last
    `spares` of them hot spares, every one a 4xH100 server whose GPUs sit
    in its own fake sysfs tree (cluster.sysfs[name])."""
    total = job_nodes + spares
    cluster = GantryCluster(
        agents=total, label="correlated-failure-real",
        hot_spares=f"node[{job_nodes + 1:02d}-{total:02d}]", **options)
    cluster.sysfs = {}
    for i in range(1, total + 1):
        name = GantryCluster.node_name(i)
        cluster.sysfs[name] = h100_node_with_fake_sysfs(cluster, name)
    return cluster


def ranks_running(cluster, job, attempt, count):
    """Whether all `count` ranks of the attempt have started."""
    return len(glob.glob(cluster.path(f"ran.{job}.{attempt}.*"))) == count


def real_agent_failure_round(cluster, job_nodes, failures):
    """On a started real_agent_cluster: a job on job_nodes nodes, then
    its nodes fail one after another, spread over 0.9 s, as `failures`
    says in order: "kill" (agent killed), "gpu" (a GPU gone from the PCI
    bus), "freeze" (agent stopped). Returns (job id, seconds from the last
    failure to every rank of the next attempt running, the failed node
    names in the order they failed)."""
    script = cluster.write_script("ranks.sh", RANK_SCRIPT)
    job = cluster.submit(script, "-N", str(job_nodes), "--max-restarts=5")
    cluster.wait_job(job, "RUNNING", timeout=60)
    first = cluster.job(job)["attempt"]
    wait_for(lambda: ranks_running(cluster, job, first, job_nodes), 60,
             "every rank of the first attempt")
    nodes = expand_hostlist(cluster.job(job)["nodelist"])
    failed = nodes[:len(failures)]
    step = 0.9 / max(1, len(failures) - 1)
    for i, (name, how) in enumerate(zip(failed, failures)):
        if i > 0:
            time.sleep(step)
        if how == "kill":
            cluster.kill_agent(name)
        elif how == "freeze":
            cluster.signal_agent(name, signal.SIGSTOP)
        else:
            pull_gpu(cluster.sysfs[name], 1)
    failed_at = time.monotonic()

    def running_again():
        record = cluster.job(job)
        return (record["state"] == "RUNNING" and record["attempt"] > first and
                ranks_running(cluster, job, record["attempt"], job_nodes))
    wait_for(running_again, 60, "every rank running again", 0.05)
    return job, time.monotonic() - failed_at, failed


def thaw(cluster, failed, failures):
    """Lets the frozen agents die (a stopped process cannot stop itself)."""
    for name, how in zip(failed, failures):
        if how == "freeze" and cluster.agents[name].running():
            cluster.agents[name].send(signal.SIGKILL)


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

    def test_real_agents_failing_every_way_within_a_second_cost_one_restart(self):
        if not os.path.exists(H100_XML):
            self.skipTest(f"shared data not found at {H100_XML}")
        cluster = real_agent_cluster(12, 4, node_timeout=2.0,
                                     heartbeat_interval=0.5)
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        # The worst order: the first failure is found at once (a dropped
        # stream), the GPU and the frozen agent a moment later, after the
        # survivors already answered the kill of the failed attempt.
        failures = ["kill", "gpu", "kill", "freeze"]
        failed = []
        try:
            cluster.start()
            job, took, failed = real_agent_failure_round(cluster, 12, failures)
            time.sleep(2 * cluster.node_timeout)  # a cascade would show
            record = cluster.job(job)
            self.assertEqual((record["state"], record["attempt"]),
                             ("RUNNING", 2),
                             f"a cascade of restarts: {record['reason_detail']}")
            self.assertTrue(record["attempts"][0]["node_fault"])
            placed = set(expand_hostlist(record["nodelist"]))
            self.assertEqual(len(placed), 12)
            self.assertEqual(placed & set(failed), set())
            # The four spares serve, with the eight healthy survivors.
            spares = {GantryCluster.node_name(i) for i in range(13, 17)}
            self.assertEqual(placed & spares, spares)
            nodes = cluster.nodes()
            for name, how in zip(failed, failures):
                self.assertTrue(nodes[name]["drained"], name)
                if how == "gpu":
                    self.assertTrue(nodes[name]["health_problems"], name)
                else:
                    wait_for(lambda: cluster.nodes()[name]["state"] == "down",
                             2 * cluster.node_timeout, f"{name} down")
            print(f"\nevery rank running again {took:.2f} s after the last "
                  f"failure, after one restart")
            cluster.cli("cancel", str(job))
        finally:
            thaw(cluster, failed, failures)


if __name__ == "__main__":
    gantry_cluster.main()
