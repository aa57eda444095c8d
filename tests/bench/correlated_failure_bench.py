"""Correlated failure benchmark: a 64-node job on simulated nodes
(gantry-agent --simulate) loses 8 of them within a second (4 frozen, found
by the heartbeat timeout; 4 killed, found by the dropped stream), with 16
spares free. Prints, over --rounds fresh clusters, the median and worst of
  running again   the last failure -> the job RUNNING again
and the number of restarts each round took (1 is the goal: not a cascade).

Run: python3 tests/bench/correlated_failure_bench.py --build-dir build
     [--rounds 10] [--node-timeout 2] [--heartbeat-interval 0.5]
     [--node-fault-settle 0]
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
from test_correlated_failures import correlated_failure_round  # noqa: E402
from bench_support import machine_line  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--rounds", type=int, default=10)
parser.add_argument("--node-timeout", type=float, default=2.0)
parser.add_argument("--heartbeat-interval", type=float, default=0.5)
parser.add_argument("--node-fault-settle", type=float, default=0.0)
args = parser.parse_args()
os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)

times, restarts = [], []
for round_number in range(args.rounds):
    cluster = GantryCluster(
        agents=0, node_timeout=args.node_timeout,
        heartbeat_interval=args.heartbeat_interval,
        gantryd_args=["--node-fault-settle", str(args.node_fault_settle)],
        label="correlated-failure")
    try:
        cluster.start()
        job, took, _ = correlated_failure_round(cluster)
        time.sleep(2 * args.node_timeout)  # a cascade would show by now
        attempts = cluster.job(job)["attempt"]
        times.append(took)
        restarts.append(attempts - 1)
        print(f"round {round_number + 1}: running again after {took:.2f} s, "
              f"{attempts - 1} restart(s)", flush=True)
    finally:
        if "frozen" in cluster.agents:
            cluster.agents["frozen"].send(signal.SIGKILL)
        cluster.stop_processes()

print(machine_line())
print(f"8 of 64 nodes failing within a second, {args.rounds} rounds "
      f"(node timeout {args.node_timeout} s, heartbeats every "
      f"{args.heartbeat_interval} s, settle {args.node_fault_settle} s):")
print(f"  running again after the last failure: median "
      f"{statistics.median(times):.2f} s, worst {max(times):.2f} s")
print(f"  restarts per round: {restarts} (1 each is the goal)")
