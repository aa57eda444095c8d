"""Failover benchmark: from an agent's death (kill -9) to every rank of the
job running again on healthy nodes, with 1 s heartbeats.

Prints, over several repetitions, the median and worst of
  detection  kill -9 of the agent -> node declared down
  relaunch   node down -> every rank of the next attempt started
  total      kill -9 -> every rank running again (target: under 5 s)

Run: python3 tests/bench/failover_bench.py --build-dir build [--runs 5]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import gantry_cluster  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--build-dir", required=True)
parser.add_argument("--runs", type=int, default=5)
parser.add_argument("--nodes", type=int, default=2, help="nodes per job")
parser.add_argument("--node-timeout", type=float, default=3.0,
                    help="gantryd --node-timeout (3 missed 1 s heartbeats)")
args = parser.parse_args()
os.environ["GANTRY_BUILD_DIR"] = os.path.abspath(args.build_dir)

RANK_SCRIPT = """#!/bin/bash
python3 -c 'import time; print(time.time())' > started.$GANTRY_ATTEMPT.$RANK
sleep 600
"""


def wait(predicate, timeout, interval=0.01):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError("benchmark step timed out")


def one_run():
    cluster = gantry_cluster.GantryCluster(
        agents=args.nodes + 1, heartbeat_interval=1.0,
        node_timeout=args.node_timeout, restart_backoff=1.0, label="failover")
    try:
        cluster.start()
        cluster.write_script("job.sh", RANK_SCRIPT)
        job_id = cluster.submit("job.sh", "-N", str(args.nodes))
        ranks = range(args.nodes)
        wait(lambda: all(os.path.exists(cluster.path(f"started.1.{r}")) for r in ranks), 30)
        victim = cluster.job(job_id)["allocation"][-1]["node"]
        killed_at = time.time()
        cluster.kill_agent(victim)
        wait(lambda: cluster.nodes()[victim]["state"] == "down", 30, 0.005)
        down_at = time.time()

        def all_restarted():
            times = []
            for r in ranks:
                path = cluster.path(f"started.2.{r}")
                if not os.path.exists(path) or os.path.getsize(path) == 0:
                    return None
                times.append(float(open(path).read()))
            return max(times)
        running_at = wait(all_restarted, 30)
        cluster.cli("cancel", str(job_id))
        return down_at - killed_at, running_at - down_at, running_at - killed_at
    finally:
        cluster.stop_processes()
        cluster.finish(False)


def describe(name, values):
    values = sorted(values)
    print(f"  {name:<10} median {statistics.median(values):6.2f} s   "
          f"worst {values[-1]:6.2f} s   best {values[0]:6.2f} s")


results = [one_run() for _ in range(args.runs)]
print(f"failover: {args.nodes}-node job, 1 s heartbeats, node timeout "
      f"{args.node_timeout} s, {args.runs} runs")
describe("detection", [r[0] for r in results])
describe("relaunch", [r[1] for r in results])
describe("total", [r[2] for r in results])
worst = max(r[2] for r in results)
print(f"  target: under 5 s end to end -> {'met' if worst < 5 else 'NOT met'} "
      f"(worst {worst:.2f} s)")
