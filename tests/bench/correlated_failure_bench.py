"""Correlated failure benchmark: a 64-node job loses 8 of its nodes within
a second, and the time until it runs again is measured over --rounds fresh
clusters (median and worst), with the number of restarts each round took
(1 is the goal: not a cascade).

  --fleet simulated  (default) the nodes are simulated (gantry-fleet): 4 frozen (found by the heartbeat
                     timeout), then 4 killed (found by the dropped stream);
                     16 spares free. Measured to the job RUNNING again.
  --fleet real       72 real gantry-agent processes (64 for the job, 8 hot
                     spares), each a 4xH100 server from its hwloc XML with
                     its GPUs in a fake sysfs tree; 8 nodes fail over 0.9 s
                     in the worst order (a killed agent first, then GPUs
                     lost, agents frozen and killed mixed). Measured to
                     every rank of the new attempt running (each writes a
                     file when it starts).

Run: python3 tests/bench/correlated_failure_bench.py --build-dir build
     [--fleet simulated|real] [--rounds 10] [--node-timeout S]
     [--heartbeat-interval S] [--node-fault-settle S]
The timings default to gantryd's production ones for the real fleet (1 s
heartbeats, 3 s node timeout) and to 0.5 s / 2 s for the simulated one.
"""
import argparse
import os
import signal
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from gantry_cluster import GantryCluster  # noqa: E402
from test_correlated_failures import (correlated_failure_round,  # noqa: E402
                                      real_agent_cluster,
                                      real_agent_failure_round, thaw)
from bench_support import machine_line  # noqa: E402

REAL_FAILURES = ["kill", "gpu", "freeze", "kill", "gpu", "freeze", "kill",
                 "kill"]

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--fleet", choices=("simulated", "real"),
                    default="simulated")
parser.add_argument("--rounds", type=int, default=10)
parser.add_argument("--node-timeout", type=float)
parser.add_argument("--heartbeat-interval", type=float)
parser.add_argument("--node-fault-settle", type=float, default=1.0)
args = parser.parse_args()
os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)
real = args.fleet == "real"
node_timeout = args.node_timeout or (3.0 if real else 2.0)
heartbeat = args.heartbeat_interval or (1.0 if real else 0.5)
timings = dict(node_timeout=node_timeout, heartbeat_interval=heartbeat,
               gantryd_args=["--node-fault-settle",
                             str(args.node_fault_settle)])


def one_round():
    """Returns (seconds to running again, restarts taken)."""
    if real:
        cluster = real_agent_cluster(64, 8, **timings)
    else:
        cluster = GantryCluster(agents=0, label="correlated-failure",
                                **timings)
    failed = []
    try:
        cluster.start()
        if real:
            job, took, failed = real_agent_failure_round(cluster, 64,
                                                         REAL_FAILURES)
        else:
            job, took, _ = correlated_failure_round(cluster)
        time.sleep(2 * node_timeout)  # a cascade would show by now
        return took, cluster.job(job)["attempt"] - 1
    finally:
        if real:
            thaw(cluster, failed, REAL_FAILURES)
        elif "frozen" in cluster.agents:
            cluster.agents["frozen"].send(signal.SIGKILL)
        cluster.stop_processes()


times, restarts = [], []
for round_number in range(args.rounds):
    took, restarted = one_round()
    times.append(took)
    restarts.append(restarted)
    print(f"round {round_number + 1}: running again after {took:.2f} s, "
          f"{restarted} restart(s)", flush=True)

print(machine_line())
what = ("64-node job on 72 real agents, 8 nodes failing over 0.9 s "
        f"({', '.join(REAL_FAILURES)}), to every rank running"
        if real else "8 of 64 simulated nodes failing within a second "
        "(4 frozen, 4 killed), to the job RUNNING")
print(f"{what}; {args.rounds} rounds (node timeout {node_timeout} s, "
      f"heartbeats every {heartbeat} s, settle {args.node_fault_settle} s):")
print(f"  running again after the last failure: median "
      f"{statistics.median(times):.2f} s, worst {max(times):.2f} s")
print(f"  restarts per round: {restarts} (1 each is the goal)")
