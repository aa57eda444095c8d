"""Shrink benchmark: a job with a node range (--nodes=MIN-MAX) loses a node
(kill -9 of its agent) when no replacement is free, and restarts on the
nodes it still has.

One cluster of --nodes agents, no hot spares; each round submits a job
with --nodes=(N-1)-N and 2 ranks per node, waits for every rank, kills the
agent of one node (never the first), and times
  detection  kill -9 of the agent -> node declared down
  relaunch   node down -> every rank of the shrunk attempt started
  total      kill -9 -> every rank running again on N-1 nodes
then cancels the job, restarts the agent and resumes its node for the next
round. Each rank stamps its start time, world size and node count; a round
counts only if every rank of the second attempt saw WORLD_SIZE=2(N-1) and
SLURM_NNODES=N-1.

Run: python3 tests/bench/shrink_bench.py --build-dir build [--rounds 10]
"""
import argparse
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import gantry_cluster  # noqa: E402
from bench_support import machine_line  # noqa: E402
from gantry_cluster import wait_for  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--rounds", type=int, default=10)
parser.add_argument("--nodes", type=int, default=4, help="agents = MAX")
parser.add_argument("--heartbeat", type=float, default=1.0,
                    help="agent heartbeat interval, s")
parser.add_argument("--node-timeout", type=float, default=3.0,
                    help="gantryd --node-timeout")
args = parser.parse_args()
os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)

RANK_SCRIPT = """#!/bin/bash
echo "$(python3 -c 'import time; print(time.time())') $WORLD_SIZE $SLURM_NNODES" \\
  > "started.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$RANK.tmp"
mv "started.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$RANK.tmp" \\
  "started.$SLURM_JOB_ID.$GANTRY_ATTEMPT.$RANK"
sleep 600
"""


def stamps(cluster, job_id, attempt, ranks):
    """[(time, world size, nodes)] of every rank, or None while missing."""
    out = []
    for r in range(ranks):
        path = cluster.path(f"started.{job_id}.{attempt}.{r}")
        if not os.path.exists(path):
            return None
        when, world, nodes = open(path).read().split()
        out.append((float(when), int(world), int(nodes)))
    return out


def one_round(cluster, names):
    job_id = cluster.submit("job.sh", f"--nodes={args.nodes - 1}-{args.nodes}",
                            "--ntasks-per-node=2")
    wait_for(lambda: stamps(cluster, job_id, 1, 2 * args.nodes), 30,
             "every rank of the first attempt", 0.01)
    victim = random.choice(names[1:])
    killed_at = time.time()
    cluster.kill_agent(victim)
    wait_for(lambda: cluster.nodes()[victim]["state"] == "down", 30,
             f"{victim} down", 0.005)
    down_at = time.time()
    shrunk = 2 * (args.nodes - 1)
    second = wait_for(lambda: stamps(cluster, job_id, 2, shrunk), 60,
                      "every rank of the shrunk attempt", 0.01)
    for _, world, nodes in second:
        if world != shrunk or nodes != args.nodes - 1:
            raise AssertionError(f"rank saw WORLD_SIZE={world} "
                                 f"SLURM_NNODES={nodes}")
    running_at = max(when for when, _, _ in second)
    cluster.cli("cancel", str(job_id))
    cluster.start_agent(victim)
    cluster.wait_nodes_up([victim], timeout=30)
    cluster.cli("resume", victim)
    # The cancelled job's ranks are gone and every node is back in service
    # before the next round starts.
    wait_for(lambda: cluster.job(job_id)["state"] == "CANCELLED" and
             all(not n["drained"] and n["state"] == "up" and
                 n["cpus_allocated"] == 0 for n in cluster.nodes().values()),
             30, "the cluster back in service", 0.05)
    return down_at - killed_at, running_at - down_at, running_at - killed_at


def describe(name, values):
    values = sorted(values)
    print(f"  {name:<10} median {statistics.median(values):6.2f} s   "
          f"worst {values[-1]:6.2f} s   best {values[0]:6.2f} s")


def main():
    cluster = gantry_cluster.GantryCluster(
        agents=args.nodes, heartbeat_interval=args.heartbeat,
        node_timeout=args.node_timeout, label="shrink")
    try:
        cluster.start()
        cluster.write_script("job.sh", RANK_SCRIPT)
        names = [gantry_cluster.GantryCluster.node_name(i)
                 for i in range(1, args.nodes + 1)]
        results = [one_round(cluster, names) for _ in range(args.rounds)]
    finally:
        cluster.stop_processes()
        cluster.finish(False)
    print(machine_line())
    print(f"shrink: --nodes={args.nodes - 1}-{args.nodes}, 2 ranks per node, "
          f"no spare; {args.heartbeat} s heartbeats, node timeout "
          f"{args.node_timeout} s; {args.rounds} rounds")
    describe("detection", [r[0] for r in results])
    describe("relaunch", [r[1] for r in results])
    describe("total", [r[2] for r in results])


main()
